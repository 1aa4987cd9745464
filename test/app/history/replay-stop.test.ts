import { expect } from "chai";
import { MemoryStore, ReplayError, ReplayStoppedError, type EmitRecord, type QueuedMessage } from "../../../src/index";
import { ForwardingStore } from "../../../src/store/forwarding-store";
import { Collector, sleep, useApps, webhook } from "../../helpers/app";
import { useEngineApps } from "../../helpers/engine-apps";
import { postJson } from "../../helpers/http-client";
import { Hold } from "../../helpers/hold";
import { recordingLogger, rejection, until, type LogLine } from "../../helpers/wait";

/** A real store whose enqueues wait, once `hold()` is called, until the function it returns is. */
class HeldWrites extends ForwardingStore {
  private readonly gate = new Hold();
  readonly hold = () => this.gate.hold();

  /** Enqueues waiting now. */
  get held(): number {
    return this.gate.held;
  }

  override async enqueue(queue: string, message: QueuedMessage, options?: { internal?: boolean }): Promise<void> {
    await this.gate.pass();
    return this.inner.enqueue(queue, message, options);
  }

  override async enqueueAll(copies: readonly EmitRecord[], options?: { internal?: boolean }): Promise<void> {
    await this.gate.pass();
    return this.inner.enqueueAll(copies, options);
  }
}

const STOPPED_LINE = "replay: the app is stopping; the bulk replay stops here, the replays it queued stay queued";

describe("a bulk replay while the app stops", function () {
  this.timeout(20_000);
  const engineApp = useEngineApps("replay-stop");
  const newApp = useApps();

  it("ends at stop(): nothing more is queued, what was queued stays queued, and the count is told (its rejection, the log)", async () => {
    const lines: LogLine[] = [];
    const app = engineApp("embedded", "replay-stop", { logger: recordingLogger(lines) });
    const got = new Collector();
    const hook = webhook();
    app.task({ source: hook, name: "receive" }, got.handler);
    await app.start();
    for (let i = 0; i < 10; i++) expect((await postJson(hook.url, { n: i })).status).to.equal(202);
    await got.waitFor(10);
    await until(async () => (await app.events.list({ status: "succeeded" })).events.length === 10);
    let replayed = 0;
    // Four a second: the whole of it would take 2.5 s.
    const replaying = app.events.replay({}, { ratePerSecond: 4, onReplayed: () => void replayed++ });
    await until(() => replayed >= 2);
    const started = Date.now();
    await app.stop({ timeoutMs: 5_000 });
    // The pause before the next replay ends with the stop.
    expect(Date.now() - started).to.be.below(1_000);
    const error = await rejection(replaying);
    expect(error).to.be.instanceOf(ReplayStoppedError).and.to.be.instanceOf(ReplayError);
    const { matched, queued } = error as ReplayStoppedError;
    expect(matched).to.equal(10);
    expect(queued).to.equal(replayed);
    expect(error.message).to.equal(`bulk replay stopped as the app stops, after queueing ${queued} replay(s) of 10 matching event(s); the replays queued stay queued`);
    const told = lines.findIndex((l) => l.msg === STOPPED_LINE);
    const stoppedAt = lines.findIndex((l) => l.msg === "stopped");
    expect(told).to.be.within(0, stoppedAt);
    expect(lines[told].fields).to.include({ matched: 10, queued });
    // Past two more of its paces: nothing more is queued, nothing is logged.
    await sleep(600);
    expect(replayed).to.equal(queued);
    expect(lines.slice(stoppedAt + 1).map((l) => l.msg)).to.deep.equal([]);

    // The next start has those replays, and no more.
    const again = engineApp("embedded", "replay-stop");
    const ran = new Collector();
    again.task({ source: webhook(), name: "receive" }, ran.handler);
    await again.start();
    const replays = (await again.events.list({ limit: 100 })).events.filter((e) => e.replayOf !== undefined);
    expect(replays).to.have.length(queued);
  });

  it("stop() waits for the write a replay has in flight before the store closes", async () => {
    const store = new HeldWrites(new MemoryStore());
    const got = new Collector();
    const hook = webhook();
    const app = newApp("replay-held", { store }).task({ source: hook, name: "receive" }, got.handler);
    await app.start();
    for (let i = 0; i < 3; i++) await postJson(hook.url, { n: i });
    await got.waitFor(3);
    await until(async () => (await app.events.list({ status: "succeeded" })).events.length === 3);
    const release = store.hold();
    const replaying = app.events.replay({}, { ratePerSecond: 1_000 });
    await until(() => store.held === 1);
    let stoppedAt: number | undefined;
    const stopping = app.stop({ timeoutMs: 5_000 }).then(() => (stoppedAt = Date.now()));
    await sleep(300);
    expect(stoppedAt, "stop() waits for the replay's write").to.equal(undefined);
    const releasedAt = Date.now();
    release();
    await stopping;
    expect(stoppedAt).to.be.at.least(releasedAt);
    const error = (await rejection(replaying)) as ReplayStoppedError;
    expect(error).to.be.instanceOf(ReplayStoppedError);
    expect({ matched: error.matched, queued: error.queued }).to.deep.equal({ matched: 3, queued: 1 });
  });

  it("stop() gives up on a replay's write still held at its timeout, and says so", async () => {
    const lines: LogLine[] = [];
    const store = new HeldWrites(new MemoryStore());
    const hook = webhook();
    const got = new Collector();
    const app = newApp("replay-stuck", { store, logger: recordingLogger(lines) }).task({ source: hook, name: "receive" }, got.handler);
    await app.start();
    await postJson(hook.url, { n: 1 });
    await got.waitFor(1);
    await until(async () => (await app.events.list({ status: "succeeded" })).events.length === 1);
    const release = store.hold();
    const replaying = app.events.replay({});
    await until(() => store.held === 1);
    const started = Date.now();
    await app.stop({ timeoutMs: 400 });
    expect(Date.now() - started).to.be.below(1_500);
    expect(lines.find((l) => l.msg === "shutdown timeout: a replay was still writing; the store closes without waiting for it")?.fields).to.include({ replays: 1 });
    release();
    await replaying.catch(() => undefined);
  });

  it("is refused once stop() has begun, as one event, a filter or a dry run, with a ReplayError saying why", async () => {
    const hook = webhook();
    const got = new Collector();
    const app = newApp("replay-refused").task({ source: hook, name: "receive" }, got.handler);
    await app.start();
    const { id } = (await postJson(hook.url, { n: 1 })).json<{ id: string }>();
    await got.waitFor(1);
    const stopping = app.stop();
    const refusal = "app.events.replay: the app is stopping, or stopped: no replay is queued from stop() on";
    for (const asked of [() => app.events.replay(id), () => app.events.replay({}), () => app.events.replay({}, { dryRun: true })]) {
      const error = await rejection(asked());
      expect(error).to.be.instanceOf(ReplayError);
      expect(error.message).to.equal(refusal);
    }
    await stopping;
    expect((await rejection(app.events.replay(id))).message).to.equal(refusal);
  });
});
