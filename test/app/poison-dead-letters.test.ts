import { expect } from "chai";
import { CoreApp, WebhookSource } from "../../src/index";
import { send } from "../helpers/http-client";
import { sleep } from "../helpers/app";
import { until } from "../helpers/wait";
import { ENGINES, useEngineApps, type Engine } from "../helpers/engine-apps";


/** JSON arrays nested `depth` levels. */
function nested(depth: number): unknown {
  let value: unknown = [];
  for (let i = 1; i < depth; i++) value = [value];
  return value;
}

/**
 * A value nested deeper than MessagePack can encode must still end as a dead letter after its
 * attempts: before, the dead-letter write threw every time and the event ran for ever.
 */
describe("events the store cannot write whole still end as dead letters after their attempts", function () {
  this.timeout(30_000);
  const appOn = useEngineApps("poison");
  const makeApp = (engine: Engine): CoreApp => appOn(engine, "poison");

  for (const engine of ["embedded", "postgres"] as const) {
    it(`${engine}: a 20,000-level body let in by a raised maxBodyDepth runs its attempts, then is a dead letter with its raw bytes`, async () => {
      const app = makeApp(engine);
      const source = new WebhookSource({ path: "/hook", host: "127.0.0.1", port: 0, maxBodyDepth: 100_000 });
      let runs = 0;
      app.task({ source, name: "fails", retry: { attempts: 2, initialDelayMs: 10 } }, async () => {
        runs++;
        throw new Error("cannot handle this");
      });
      await app.start();
      const body = "[".repeat(20_000) + "]".repeat(20_000);
      expect((await send(source.url, { body, headers: { "content-type": "application/json" } })).status).to.equal(202);
      await until(async () => (await app.store.deadLetters.list()).length === 1, 10_000);
      const [letter] = await app.store.deadLetters.list();
      expect(letter.attempts).to.equal(2);
      expect(letter.error).to.equal("cannot handle this");
      expect(letter.message.raw?.toString()).to.equal(body);
      await sleep(300);
      expect(runs).to.equal(2);
      expect(await app.store.depth("webhook:fails")).to.equal(0);
    });
  }

  for (const engine of ["memory", "embedded"] as const) {
    it(`${engine}: a message whose id is too long for an lmdb key runs its attempts, then is a dead letter that can be read and replayed`, async () => {
      const app = makeApp(engine);
      let runs = 0;
      app.task({ source: "in", name: "fails", retry: { attempts: 2, initialDelayMs: 10 } }, async () => {
        runs++;
        throw new Error("no");
      });
      await app.start();
      const id = `long-${"x".repeat(3_000)}`;
      await app.store.enqueue("in", { id, payload: { n: 1 }, attempts: 0, enqueuedAt: Date.now() });
      await until(async () => (await app.store.deadLetters.list()).length === 1, 10_000);
      await sleep(300);
      expect(runs).to.equal(2);
      expect((await app.store.deadLetters.get(id))?.message.id).to.equal(id);
      expect(await app.store.deadLetters.replay(id)).to.equal(true);
      await until(() => runs === 3);
      await until(async () => (await app.store.deadLetters.get(id)) !== undefined);
      expect(await app.store.deadLetters.purge({ id })).to.equal(1);
      expect(await app.store.deadLetters.list()).to.deep.equal([]);
    });
  }

  for (const engine of ENGINES) {
    it(`${engine}: a handler throwing what String() cannot convert, or an Error whose message is not text, runs its attempts, then is a dead letter, every run in the history`, async () => {
      const app = makeApp(engine);
      const source = new WebhookSource({ path: "/hook", host: "127.0.0.1", port: 0 });
      const thrown: Record<number, () => unknown> = {
        1: () => Object.create(null),
        2: () => Object.assign(new Error("x"), { message: 42 }),
        3: () => Object.assign(new Error("x"), { message: { big: "y".repeat(10) } }),
      };
      const runs = new Map<number, number>();
      app.task({ source, name: "throws", retry: { attempts: 2, initialDelayMs: 10 } }, async (_ctx, event: { body: { n: number } }) => {
        const { n } = event.body;
        runs.set(n, (runs.get(n) ?? 0) + 1);
        throw thrown[n]();
      });
      await app.start();
      const ids: string[] = [];
      for (const n of [1, 2, 3]) ids.push((await send(source.url, { body: JSON.stringify({ n }), headers: { "content-type": "application/json" } })).json<{ id: string }>().id);
      await until(async () => (await app.store.deadLetters.list()).length === 3, 10_000);
      const letters = new Map((await app.store.deadLetters.list()).map((l) => [l.message.id, l]));
      expect(ids.map((id) => [letters.get(id)?.attempts, letters.get(id)?.error])).to.deep.equal([
        [2, "[object Object]"],
        [2, "42"],
        [2, "[object Object]"],
      ]);
      await sleep(300);
      expect([...runs.entries()].sort()).to.deep.equal([[1, 2], [2, 2], [3, 2]]);
      expect(await app.store.depth("webhook:throws")).to.equal(0);
      await app.store.history!.flush();
      const event = await app.events.get(ids[1]);
      expect(event?.runs.map((r) => [r.outcome, r.error?.message])).to.deep.equal([["retry", "42"], ["dead_letter", "42"]]);
      expect(event?.deliveries[0]).to.include({ status: "dead", attempts: 2, lastError: "42" });
      expect((await app.events.get(ids[0]))?.runs.map((r) => [r.outcome, r.error])).to.deep.equal([["retry", { type: "object", message: "[object Object]" }], ["dead_letter", { type: "object", message: "[object Object]" }]]);
      // The memory history's size in bytes stays a number (its bound holds).
      expect(Number.isFinite((await app.store.history!.size()).bytes)).to.equal(true);
    });
  }

  for (const engine of ENGINES) {
    it(`${engine}: a task emitting a value nested 20,000 levels fails with a clear error and ends as a dead letter`, async () => {
      const app = makeApp(engine);
      app.task({ source: "in", emit: "out", name: "deep", retry: { attempts: 1 } }, async () => nested(20_000));
      app.task({ source: "out", name: "next" }, async () => undefined);
      await app.start();
      await app.store.enqueue("in", { id: "e1", payload: { small: true }, attempts: 0, enqueuedAt: Date.now() });
      await until(async () => (await app.store.deadLetters.list()).length === 1, 10_000);
      const [letter] = await app.store.deadLetters.list();
      expect(letter.error).to.match(/^the task's result cannot be stored: result\[0\]\[0\].*: a value nested deeper than 512 levels cannot be stored$/);
      expect(letter.message.payload).to.deep.equal({ small: true });
      expect(await app.store.depth("out")).to.equal(0);
    });
  }
});
