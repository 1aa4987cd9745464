import { expect } from "chai";
import { WebhookSource, type CoreApp } from "../../../src/index";
import { ENGINES, useEngineApps, type Engine } from "../../helpers/engine-apps";
import { outcome, Labels } from "./normalize";

/* What the events API and pauses answer when the app cannot: not started, stopped, history off; alike on every engine. */
describe("engine conformance: the events API before start, after stop, and with the history off", function () {
  this.timeout(60_000);
  const engineApp = useEngineApps("refusal-conformance");

  async function observe(engine: Engine): Promise<unknown> {
    const labels = new Labels();
    const make = (name: string, history?: false): CoreApp => {
      const app = engineApp(engine, name, history === false ? { history: false } : {});
      app.task({ source: new WebhookSource({ path: "/in", host: "127.0.0.1", port: 0 }), name: "t" }, async () => undefined);
      return app;
    };
    const calls = (app: CoreApp) => ({
      list: () => app.events.list(),
      get: () => app.events.get("x"),
      replay: () => app.events.replay("x"),
      bulk: () => app.events.replay({ status: "dead" }, { dryRun: true }),
      pause: () => app.pause("t"),
      paused: () => app.paused(),
      resume: () => app.resume("t"),
      letters: () => app.deadLetters.list(),
    });
    const seen: Record<string, unknown> = {};
    const before = make("before");
    for (const [name, call] of Object.entries(calls(before))) seen[`before start: ${name}`] = await outcome(labels, call);
    const off = make("off", false);
    await off.start();
    for (const [name, call] of Object.entries(calls(off))) seen[`history off: ${name}`] = await outcome(labels, call);
    // One app of a process on a data directory at a time (the embedded store refuses a second).
    await off.stop();
    const stopped = make("stopped");
    await stopped.start();
    await stopped.stop();
    for (const [name, call] of Object.entries(calls(stopped))) seen[`stopped: ${name}`] = await outcome(labels, call);
    return JSON.parse(JSON.stringify(seen).replace(new RegExp(engine, "g"), "<engine>"));
  }

  it("refuses, or answers, alike", async () => {
    const [memory, embedded, postgres] = [await observe(ENGINES[0]!), await observe(ENGINES[1]!), await observe(ENGINES[2]!)];
    expect(embedded, "embedded").to.deep.equal(memory);
    expect(postgres, "postgres").to.deep.equal(memory);
  });
});
