import { expect } from "chai";
import { PermanentError, WebhookSource, type CoreApp, type WebhookEvent } from "../../../src/index";
import { postJson } from "../../helpers/http-client";
import { useEngineApps, type Engine } from "../../helpers/engine-apps";
import { until } from "../../helpers/wait";
import { Labels } from "./normalize";

/*
 * The durable engines across a restart: a paused task stays paused, its events pending and run
 * once resumed; the history, dead letters and links read the same from the next app.
 */
describe("engine conformance: embedded and PostgreSQL across a restart", function () {
  this.timeout(60_000);
  const engineApp = useEngineApps("restart-conformance");

  function build(app: CoreApp, ran: string[]): CoreApp {
    const hook = new WebhookSource({ path: "/in", host: "127.0.0.1", port: 0 });
    app.task<WebhookEvent<{ n: number }>>({ source: hook, name: "a", emit: "next" }, async (_ctx, event) => {
      if (event.body.n === 2) throw new PermanentError("no two");
      return { n: event.body.n };
    });
    app.task<WebhookEvent<{ n: number }>>({ source: hook, name: "b" }, async (_ctx, event) => void ran.push(`b${event.body.n}`));
    app.task<{ n: number }>({ source: "next", name: "c" }, async (_ctx, value) => void ran.push(`c${value.n}`));
    return app;
  }

  async function observe(engine: Engine): Promise<unknown> {
    const labels = new Labels();
    const ran: string[] = [];
    const first = build(engineApp(engine, "restart"), ran);
    await first.start();
    // Right after start (PostgreSQL's listener may be reading the paused set): b runs nothing from here on.
    await first.pause("b");
    const url = (first.tasks.find((t) => t.name === "a")!.source as WebhookSource).url;
    for (const n of [1, 2]) {
      const id = (await postJson(url, { n })).json<{ id: string }>().id;
      labels.name(id, `e${n}`);
      await first.events.get(id);
    }
    await until(async () => (await first.deadLetters.list()).length === 1 && ran.includes("c1"));
    await first.stop();
    const second = build(engineApp(engine, "restart"), ran);
    await second.start();
    const seen: Record<string, unknown> = { paused: [...(await second.paused())], ranBefore: [...ran] };
    seen.list = labels.normalize(await second.events.list());
    seen.letters = labels.normalize((await second.deadLetters.list()).map((l) => [l.message.id, l.task, l.error, l.attempts]));
    await second.resume("b");
    await until(async () => ran.filter((r) => r.startsWith("b")).length === 2);
    await until(async () => (await second.events.list({ status: "pending" })).events.length === 0);
    seen.ran = [...ran].sort();
    seen.after = labels.normalize(await second.events.list());
    return seen;
  }

  it("pauses, pending events, runs, dead letters and links read the same after a restart", async () => {
    const embedded = await observe("embedded");
    const postgres = await observe("postgres");
    expect(postgres).to.deep.equal(embedded);
    expect((embedded as { paused: string[] }).paused).to.deep.equal(["b"]);
  });
});
