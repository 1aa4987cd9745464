import { expect } from "chai";
import type { CoreApp, CoreAppOptions } from "../../src/index";
import { useApps, webhook } from "../helpers/app";
import { send } from "../helpers/http-client";
import { recordingLogger, until, type LogLine } from "../helpers/wait";

/**
 * The memory store never drops a dead letter (that would lose an accepted event without a
 * word), and each holds the heap: they count against its limits, so a store full of them
 * refuses new events as a full queue does, until they are replayed or purged.
 */
describe("memory store: dead letters count against its limits", function () {
  this.timeout(10_000);
  const newApp = useApps();

  async function failingApp(options: CoreAppOptions): Promise<{ app: CoreApp; url: string; lines: LogLine[] }> {
    const lines: LogLine[] = [];
    const app = newApp(undefined, { store: "memory", logger: recordingLogger(lines), ...options });
    const source = webhook();
    app.task({ source, name: "fails", retry: { attempts: 1 } }, () => {
      throw new Error("always fails");
    });
    await app.start();
    return { app, url: source.url, lines };
  }

  it("a queue whose dead letters reach maxQueued answers 503 queue_full, says why in the log, and accepts again once they are purged", async () => {
    const { app, url, lines } = await failingApp({ maxQueued: 2 });
    for (const n of [1, 2]) expect((await send(url, { body: `e${n}` })).status).to.equal(202);
    await until(async () => (await app.deadLetters.list()).length === 2, 3_000);

    const refused = await send(url, { body: "e3" });
    expect(refused.status).to.equal(503);
    expect(refused.headers.get("retry-after")).to.equal("10");
    expect(refused.json()).to.deep.include({ error: "queue_full" });
    expect(refused.json().message).to.equal('queue "webhook:fails" holds 2 messages, 2 of them dead letters');
    const warnings = lines.filter((l) => l.msg.startsWith("dead letters fill the memory store"));
    expect(warnings, "one warning, however many refusals").to.have.length(1);
    expect(warnings[0].msg).to.contain("maxQueued (2)").and.contain("replayed or purged").and.contain("app.deadLetters");
    expect(warnings[0].fields).to.deep.include({ queue: "webhook:fails", queueDeadLetters: 2, deadLetters: 2 });
    expect((await send(url, { body: "e4" })).status).to.equal(503);
    expect(lines.filter((l) => l.msg.startsWith("dead letters fill"))).to.have.length(1);

    // The status still tells dead letters from waiting messages.
    const [queue] = (await app.status()).queues;
    expect(queue).to.deep.include({ queue: "webhook:fails", depth: 0, waiting: 0, inFlight: 0, deadLetters: 2 });

    // A replay puts the event back in its queue: the queue stays as full.
    const [first] = await app.deadLetters.list();
    expect(await app.deadLetters.replay(first.message.id)).to.equal(true);
    await until(async () => (await app.deadLetters.list()).length === 2, 3_000);
    expect((await send(url, { body: "e5" })).status).to.equal(503);
    // Purged: room for one more.
    expect(await app.deadLetters.purge({ id: first.message.id })).to.equal(1);
    expect((await send(url, { body: "e6" })).status).to.equal(202);
  });

  it("maxBytes bounds the bytes of its dead letters: past it, 503 store_full for every queue", async () => {
    const { app, url, lines } = await failingApp({ maxBytes: 4_000 });
    expect((await send(url, { body: "x".repeat(5_000) })).status).to.equal(202);
    await until(async () => (await app.deadLetters.list()).length === 1, 3_000);
    const refused = await send(url, { body: "small" });
    expect(refused.status).to.equal(503);
    expect(refused.headers.get("retry-after")).to.equal("10");
    expect(refused.json()).to.deep.include({ error: "store_full", message: "the store's dead letters hold 4000 bytes, its limit" });
    expect(lines.filter((l) => l.msg.startsWith("dead letters fill the memory store up to its maxBytes (4000)"))).to.have.length(1);
    await app.deadLetters.purge();
    expect((await send(url, { body: "small" })).status).to.equal(202);
  });
});
