import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { MemoryStore, type StateStore } from "../../src/index";
import { CONSOLE_SIGN_OUTS } from "../../src/console/console-sign-outs";
import { ForwardingStore } from "../../src/store/forwarding-store";
import { sleep } from "../helpers/app";
import { Hold } from "../helpers/hold";
import { recordingLogger, until, type LogLine } from "../helpers/wait";
import { ConsoleClient } from "./console-client";
import { eventually, startShop, type ShopApp } from "./shop-app";

/** A memory store whose console sign-out reads wait, once `hold()` is called, until the function it returns is: a console request held in flight. */
class HeldSignOuts extends ForwardingStore {
  private readonly gate = new Hold();
  readonly hold = () => this.gate.hold();

  /** Reads waiting now. */
  get held(): number {
    return this.gate.held;
  }

  override state(namespace: string): StateStore {
    const inner = this.inner.state(namespace);
    if (namespace !== CONSOLE_SIGN_OUTS) return inner;
    return {
      get: async <V>(key: string): Promise<V | undefined> => {
        await this.gate.pass();
        return inner.get<V>(key);
      },
      set: (key, value, options) => inner.set(key, value, options),
      delete: (key) => inner.delete(key),
      setIfAbsent: (key, value, options) => inner.setIfAbsent(key, value, options),
    };
  }
}

describe("the console's bulk replay and the app's stop", function () {
  this.timeout(20_000);
  let dir: string;
  const shops: ShopApp[] = [];
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), "console-stop-"))));
  afterEach(async () => {
    for (const shop of shops.splice(0)) await shop.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("ends there: nothing more is queued, the count is logged, and its note is removed before the store closes (the next start's console takes one at once)", async () => {
    const lines: LogLine[] = [];
    const shop = await startShop(undefined, { store: "embedded", dataDir: dir, logger: recordingLogger(lines) });
    shops.push(shop);
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push(await shop.deliver({ order: `o-stop-${i}`, fail: true }));
    await eventually(async () => ((await shop.app.events.list({ status: "dead" })).events.length === 4 ? true : undefined), 5_000, "the dead events");
    const client = new ConsoleClient(shop.consoleUrl);
    await client.signIn();
    // Two a second: the four would take 1.5 s.
    const form = { status: "dead", task: "billing", ratePerSecond: "2" };
    expect((await client.post("/replay-matching", form)).status).to.equal(303);
    await eventually(async () => ((await shop.app.events.get(ids[0]))?.replays.length === 1 ? true : undefined), 5_000, "the first replay");
    const started = Date.now();
    await shop.app.stop({ timeoutMs: 2_000 });
    expect(Date.now() - started).to.be.below(1_000);
    const stoppedAt = lines.findIndex((l) => l.msg === "stopped");
    const told = lines.find((l) => l.msg === "console: bulk replay stopped as the app stops");
    expect(told?.fields).to.include({ matched: 4, component: "console" });
    const queued = told!.fields!.queued as number;
    expect(queued).to.be.within(1, 3);
    expect(lines.filter((l) => /note of the (finished|running) bulk replay/.test(l.msg))).to.deep.equal([]);
    await sleep(1_200);
    expect(lines.slice(stoppedAt + 1).map((l) => l.msg)).to.deep.equal([]);

    // The same store, started again: its console is not blocked by a note left behind, and the replays queued are there.
    const again = await startShop(undefined, { store: "embedded", dataDir: dir });
    shops.push(again);
    const replays = (await again.app.events.list({ limit: 100 })).events.filter((e) => e.replayOf !== undefined);
    expect(replays).to.have.length(queued);
    const next = new ConsoleClient(again.consoleUrl);
    await next.signIn();
    const answer = await next.post("/replay-matching", { ...form, ratePerSecond: "100" });
    expect(answer.status, answer.text).to.equal(303);
  });

  it("is refused (503) when asked as the app stops, and none starts", async () => {
    const lines: LogLine[] = [];
    const store = new HeldSignOuts(new MemoryStore());
    const shop = await startShop(undefined, { store, logger: recordingLogger(lines) });
    shops.push(shop);
    await shop.deliver({ order: "o-late", fail: true });
    await eventually(async () => ((await shop.app.deadLetters.list()).length === 1 ? true : undefined), 5_000, "the dead letter");
    const client = new ConsoleClient(shop.consoleUrl);
    await client.signIn();
    const csrf = await client.csrf();
    // The request is in flight (its session being checked) when the stop begins.
    const release = store.hold();
    const posting = client.post("/replay-matching", { status: "dead", task: "billing" }, csrf);
    await until(() => store.held === 1);
    const stopping = shop.app.stop({ timeoutMs: 2_000 });
    release();
    const answer = await posting;
    expect(answer.status).to.equal(503);
    expect(answer.text).to.include("The app is stopping: no bulk replay starts now.");
    await stopping;
    expect(lines.filter((l) => /bulk replay|^replay/.test(l.msg)).map((l) => l.msg)).to.deep.equal([]);
  });
});
