import { expect } from "chai";
import { CoreApp, MemoryStore, silentLogger, type QueuedMessage } from "../../src/index";
import { ForwardingStore } from "../../src/store/forwarding-store";
import type { ClaimFlow } from "../../src/store/store";
import { Collector, sleep, webhook } from "../helpers/app";
import { postJson } from "../helpers/http-client";
import { until } from "../helpers/wait";

/**
 * A real store whose claims wait at a gate before they reach it, as a claim on PostgreSQL waits
 * for a free connection: what it takes is what the queue holds when it gets through.
 */
class SlowClaims extends ForwardingStore {
  // The claims this test holds go through claim(), not the memory engine's synchronous claimNow.
  override claimNow = undefined;
  override completeNow = undefined;
  held = 0;
  private letGo: (() => void) | undefined;
  private gate: Promise<void> | undefined;

  holdClaims(): void {
    this.gate = new Promise((resolve) => (this.letGo = resolve));
  }

  letClaimsThrough(): void {
    this.gate = undefined;
    this.letGo?.();
  }

  override async claim(queue: string, limit: number, flow?: ClaimFlow): Promise<QueuedMessage[]> {
    if (this.gate !== undefined) {
      this.held++;
      await this.gate;
    }
    return this.inner.claim(queue, limit, flow);
  }
}

describe("pause: a claim under way when the task is paused", () => {
  let app: CoreApp | undefined;
  afterEach(async () => app?.stop({ timeoutMs: 2_000 }));

  it("runs nothing it brings back, even an event accepted after pause() resolved; resume runs it", async () => {
    const store = new SlowClaims(new MemoryStore());
    app = new CoreApp("pause-claim", { store, logger: silentLogger });
    const hook = webhook({ path: "/p" });
    const got = new Collector();
    app.task({ source: hook, name: "t" }, got.handler);
    await app.start();
    store.holdClaims();
    // A first event wakes the runner: its claim goes out and waits.
    await postJson(hook.url, { n: 0 });
    await until(() => store.held > 0 || got.count > 0);
    await app.pause("t");
    const id = (await postJson(hook.url, { n: 1 })).json<{ id: string }>().id;
    store.letClaimsThrough();
    await sleep(200);
    expect(got.count, "a paused task ran what a claim out before the pause brought back").to.equal(0);
    expect((await app.events.get(id))?.status).to.equal("pending");
    await app.resume("t");
    await got.waitFor(2);
    await sleep(50);
    expect(got.events.map((e) => (e.body as { n: number }).n)).to.deep.equal([0, 1]);
  });
});
