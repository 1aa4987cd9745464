import { expect } from "chai";
import type { WebhookEvent } from "../../../src/index";
import { EmbeddedStore } from "../../../src/store/embedded/embedded-store";
import type { HistoryDbs } from "../../../src/store/embedded/history/history-env";
import { decodeBody } from "../../../src/store/embedded/history/history-records";
import { Collector, sleep, useApps, webhook } from "../../helpers/app";
import { send } from "../../helpers/http-client";
import { until } from "../../helpers/wait";
import { StoreFixture } from "./store-fixture";

/** The history's databases, to look at what was written (this test only). */
function dbsOf(store: EmbeddedStore): HistoryDbs {
  return (store.history as unknown as { dbs: HistoryDbs }).dbs;
}

describe("EmbeddedStore history under an app", function () {
  this.timeout(60_000);
  const newApp = useApps();
  const fixture = new StoreFixture("wt-history-app-");
  afterEach(() => fixture.removeDirs());

  it("keeps a real delivery as received, its JSON body written once (as the raw bytes)", async () => {
    const store = new EmbeddedStore({ dir: fixture.tempDir() });
    const app = newApp(undefined, { store });
    const hook = webhook({ path: "/gh" });
    const got = new Collector<WebhookEvent>();
    app.task({ source: hook, name: "receive" }, got.handler);
    await app.start();
    const raw = JSON.stringify({ action: "opened", repository: { full_name: "octo/repo" } });
    const reply = await send(hook.url, { body: raw, headers: { "content-type": "application/json", "x-hub-signature-256": "sha256=abc", "x-github-event": "push" } });
    const id = reply.json<{ id: string }>().id;
    await got.waitFor(1);
    await until(async () => (await app.events.get(id))?.status === "succeeded");
    const event = (await app.events.get(id))!;
    expect((event.payload as WebhookEvent).body).to.deep.equal(JSON.parse(raw));
    expect((event.payload as WebhookEvent).headers["x-hub-signature-256"]).to.equal("[redacted]");
    expect(event.raw!.toString()).to.equal(raw);
    expect(decodeBody(dbsOf(store).timeline.get([event.receivedAt, id])!.b).b, "the parsed body is left out").to.equal(1);
    expect((await app.events.list({ search: "repository.full_name=octo/repo" })).events.map((e) => e.id)).to.deep.equal([id]);
  });

  it("stays the same size under steady load with a short retainMs: pruning keeps up", async () => {
    const store = new EmbeddedStore({ dir: fixture.tempDir() });
    const app = newApp(undefined, { store, history: { retainMs: 500 } });
    const hook = webhook({ path: "/load" });
    app.task({ source: hook, name: "sink" }, () => undefined);
    await app.start();
    const body = JSON.stringify({ action: "push", padding: "p".repeat(600) });
    const samples: Array<{ at: number; events: number; bytes: number }> = [];
    const started = Date.now();
    let sent = 0;
    // Steady load (up to 200 events a second) for 8 seconds: 16 retention windows.
    while (Date.now() - started < 8_000) {
      await Promise.all(Array.from({ length: 10 }, () => send(hook.url, { body, headers: { "content-type": "application/json" } })));
      sent += 10;
      await sleep(50);
      if (Date.now() - started > 1_500 && samples.length < Math.floor((Date.now() - started) / 500)) {
        samples.push({ at: Date.now() - started, ...(await store.history.size()) });
      }
    }
    await store.history.flush();
    expect(sent).to.be.greaterThan(300);
    if (process.env.SHOW_SAMPLES) console.log(sent, JSON.stringify(samples));
    const early = samples.slice(0, 3);
    const late = samples.slice(-3);
    const most = (xs: typeof samples, k: "events" | "bytes") => Math.max(...xs.map((s) => s[k]));
    // Far fewer events than were sent, and no growth from the first seconds to the last.
    expect(most(late, "events"), JSON.stringify(samples)).to.be.below(sent / 4);
    expect(most(late, "bytes"), JSON.stringify(samples)).to.be.at.most(most(early, "bytes") * 1.5 + 256 * 1024);
  });
});
