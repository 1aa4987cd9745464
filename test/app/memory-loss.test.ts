import { expect } from "chai";
import { CoreApp, createDefaultLogger, PermanentError, Queue } from "../../src/index";
import { testApp } from "../../src/testing/index";
import { gate, webhook } from "../helpers/app";
import { postJson } from "../helpers/http-client";
import { until } from "../helpers/wait";

type Line = Record<string, unknown> & { level: number; msg: string };

/**
 * A stop of an app on the memory store, with work not done: the runner said "tasks still
 * running stay in the store for the next start" (there is no next start for that store), and
 * the events still waiting went without a word, though their senders had heard 202.
 */
describe("stop on the memory store: what is lost is said", () => {
  it("names how many messages the store loses, per queue, and does not promise a next start", async () => {
    const lines: Line[] = [];
    const logger = createDefaultLogger("info", {}, { write: (text: string) => void lines.push(JSON.parse(text) as Line) });
    const app = new CoreApp("memory-loss", { store: "memory", logger });
    const hook = webhook();
    const held = gate();
    app.task({ source: hook, name: "slow", concurrency: 1 }, async () => held.promise);
    await app.start();
    for (const n of [1, 2, 3]) expect((await postJson(hook.url, { n })).status).to.equal(202);

    await app.stop({ timeoutMs: 200 });
    held.open();
    const warnings = lines.filter((l) => l.level === 40);
    expect(warnings.map((l) => l.msg)).to.not.include("shutdown timeout: tasks still running stay in the store for the next start");
    expect(warnings.map((l) => l.msg)).to.include("shutdown timeout: tasks still running are abandoned, and the memory store loses them");
    const lost = warnings.find((l) => l.messages !== undefined);
    expect(lost, JSON.stringify(warnings)).to.deep.include({ store: "memory", messages: 3, queues: { "webhook:slow": 3 } });
    expect(lost!.msg).to.match(/^3 messages not yet handled are lost with the memory store/);
  });

  it("counts the dead letters it loses too", async () => {
    const lines: Line[] = [];
    const logger = createDefaultLogger("info", {}, { write: (text: string) => void lines.push(JSON.parse(text) as Line) });
    const app = new CoreApp("memory-loss-dead", { store: "memory", logger });
    const hook = webhook();
    app.task({ source: hook, name: "fails", retry: { attempts: 1 } }, async () => {
      throw new PermanentError("declined");
    });
    await app.start();
    expect((await postJson(hook.url, {})).status).to.equal(202);
    await until(async () => (await app.deadLetters.list()).length === 1);
    await app.stop({ timeoutMs: 1_000 });
    const lost = lines.find((l) => l.level === 40 && l.deadLetters !== undefined);
    expect(lost, JSON.stringify(lines)).to.deep.include({ store: "memory", messages: 0, deadLetters: 1 });
    expect(lost!.msg).to.match(/^1 dead letter is lost with the memory store/);
  });

  // A test stops its app with work pending as a matter of course: no warning for that.
  it("testApp's stop says nothing of what its memory store drops", async () => {
    const lines: Line[] = [];
    const logger = createDefaultLogger("info", {}, { write: (text: string) => void lines.push(JSON.parse(text) as Line) });
    const app = new CoreApp("memory-loss-test", { logger });
    const later = new Queue<number>("later");
    app.task({ source: later, name: "later" }, async () => undefined);
    app.task({ source: webhook(), name: "first", emit: later }, async () => 1);
    const t = await testApp(app, { timeoutMs: 1_000 });
    // Paused: what "first" emits waits in the store when the test stops.
    await app.pause("later");
    await t.send(app.tasks[1].source as ReturnType<typeof webhook>, { body: {} });
    expect((await app.store.stats("later")).waiting).to.equal(1);
    await t.stop();
    expect(lines.filter((l) => l.level === 40 && l.messages !== undefined)).to.deep.equal([]);
  });
});
