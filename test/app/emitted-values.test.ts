import { expect } from "chai";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CoreApp, silentLogger, storedForm, UnstorableValueError, type CoreAppOptions } from "../../src/index";
import { until } from "../helpers/wait";

class Point {
  constructor(
    readonly x: number,
    readonly y: number,
  ) {}
  get length(): number {
    return Math.hypot(this.x, this.y);
  }
}

/** One of everything the documentation's table lists as stored. */
function sample(): Record<string, unknown> {
  return {
    text: "héllo",
    number: 1.5,
    big: 2n ** 40n,
    flags: [true, false, null],
    missing: undefined,
    when: new Date(1_700_000_000_000),
    bytes: Buffer.from([0, 1, 255]),
    u8: new Uint8Array([7, 8]),
    arrayBuffer: new Uint8Array([5, 6]).buffer,
    map: new Map<string | number, unknown>([["a", 1], [2, { deep: new Set(["x"]) }]]),
    set: new Set([1, "two"]),
    point: new Point(3, 4),
    shared: [{ same: 1 }, { same: 1 }],
  };
}

type Engine = "memory" | "embedded" | "embedded, after a restart";
const ENGINES: Engine[] = ["memory", "embedded", "embedded, after a restart"];

describe("emitted values are the same on every engine", function () {
  this.timeout(20_000);
  let dir: string;
  const apps: CoreApp[] = [];
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), "emitted-"))));
  afterEach(async () => {
    for (const app of apps.splice(0)) await app.stop({ timeoutMs: 2_000 });
    rmSync(dir, { recursive: true, force: true });
  });

  function makeApp(engine: Engine, name: string): CoreApp {
    const options: CoreAppOptions = engine === "memory" ? { store: "memory" } : { store: "embedded", dataDir: join(dir, "data") };
    const app = new CoreApp(name, { ...options, logger: silentLogger });
    apps.push(app);
    return app;
  }

  /** What the next task receives when a task returns `value`. */
  async function roundTrip(engine: Engine, value: () => unknown): Promise<unknown> {
    const received: unknown[] = [];
    const first = makeApp(engine, "first");
    first.task({ source: "in", emit: "out", name: "produce" }, async () => value());
    if (engine !== "embedded, after a restart") first.task({ source: "out", name: "consume" }, async (_ctx, got: unknown) => void received.push(got));
    await first.start();
    await first.store.enqueue("in", { id: "e1", payload: {}, attempts: 0, enqueuedAt: Date.now() });
    if (engine === "embedded, after a restart") {
      await until(async () => (await first.store.depth("in")) === 0 && (await first.store.depth("out")) === 1);
      await first.stop();
      const second = makeApp(engine, "second");
      second.task({ source: "out", name: "consume" }, async (_ctx, got: unknown) => void received.push(got));
      await second.start();
    }
    await until(() => received.length === 1);
    // The next engine starts afresh: an app left running on this data directory would claim its messages.
    for (const app of apps.splice(0)) await app.stop({ timeoutMs: 2_000 });
    rmSync(join(dir, "data"), { recursive: true, force: true });
    return received[0];
  }

  it("gives the next task the same value on memory, embedded, and embedded after a restart", async () => {
    const got = [];
    for (const engine of ENGINES) got.push(await roundTrip(engine, sample));
    expect(got[1], "embedded as memory").to.deep.equal(got[0]);
    expect(got[2], "embedded after a restart as memory").to.deep.equal(got[0]);
    for (const [i, value] of got.entries()) {
      const v = value as Record<string, unknown>;
      const engine = ENGINES[i];
      expect(v.when, engine).to.be.instanceOf(Date).and.deep.equal(new Date(1_700_000_000_000));
      expect(Buffer.isBuffer(v.bytes) && v.bytes.equals(Buffer.from([0, 1, 255])), engine).to.equal(true);
      expect(Buffer.isBuffer(v.u8), engine).to.equal(true);
      expect(v.arrayBuffer, engine).to.deep.equal(Buffer.from([5, 6]));
      expect(v.big, engine).to.equal(2n ** 40n);
      expect("missing" in v, engine).to.equal(true);
      // Maps arrive as plain objects (keys as strings), Sets as arrays, class instances as plain objects.
      expect(Object.getPrototypeOf(v.map), engine).to.equal(Object.prototype);
      expect(v.map, engine).to.deep.equal({ a: 1, "2": { deep: ["x"] } });
      expect(v.set, engine).to.deep.equal([1, "two"]);
      expect(Object.getPrototypeOf(v.point), engine).to.equal(Object.prototype);
      expect(v.point, engine).to.deep.equal({ x: 3, y: 4 });
    }
  });

  const refusals: Array<[string, () => unknown, string]> = [
    ["a function", () => ({ items: [1, 2, { callback: () => 1 }] }), "result.items[2].callback: a function cannot be stored"],
    ["a symbol", () => ({ tag: Symbol("t") }), "result.tag: a symbol cannot be stored"],
    [
      "a circular reference",
      () => {
        const order: { lines: Array<Record<string, unknown>> } = { lines: [{}] };
        order.lines[0]!.order = order;
        return order;
      },
      "result.lines[0].order: a circular reference (back to result) cannot be stored",
    ],
    ["a BigInt past 64 bits", () => ({ total: 2n ** 70n }), "result.total: a BigInt outside 64 bits cannot be stored"],
    ["a typed array other than Uint8Array", () => ({ samples: new Float64Array([1.5]) }), "result.samples: a Float64Array cannot be stored"],
    ["a Promise", () => ({ later: Promise.resolve(1) }), "result.later: a Promise cannot be stored"],
    ["a Map key that is an object", () => ({ index: new Map([[{ id: 1 }, "a"]]) }), "result.index.get([object Object]): a Map key that is not a string or a number cannot be stored"],
    ["an odd property name", () => ({ "x-callback": () => 1 }), 'result["x-callback"]: a function cannot be stored'],
  ];

  for (const engine of ["memory", "embedded"] as const) {
    it(`refuses, on ${engine}, what no engine can store: a task error naming the field, then a dead letter; nothing reaches the next task`, async () => {
      for (const [what, value, message] of refusals) {
        const app = makeApp(engine, `refuse-${apps.length}`);
        let consumed = 0;
        app.task({ source: "in", emit: "out", name: "produce", retry: { attempts: 1 } }, async () => value());
        app.task({ source: "out", name: "consume" }, async () => void consumed++);
        await app.start();
        await app.store.enqueue("in", { id: "e1", payload: {}, attempts: 0, enqueuedAt: Date.now() });
        await until(async () => (await app.deadLetters.list()).length === 1);
        const [letter] = await app.deadLetters.list();
        expect(letter!.error, what).to.include(message);
        expect(consumed, what).to.equal(0);
        await app.stop();
        apps.splice(apps.indexOf(app), 1);
        rmSync(join(dir, "data"), { recursive: true, force: true });
      }
    });
  }

  it("gives the next task a value it can change when the task returned frozen data, on every engine", async () => {
    // A frozen constant is plain data, but no engine gives it back frozen: the next task may add to it.
    const frozen = () => Object.freeze({ n: 1, tags: Object.freeze(["a"]), inner: Object.freeze({ deep: Object.seal({ x: 1 }) }), loose: Object.preventExtensions({ y: 2 }) });
    for (const engine of ENGINES) {
      const got = (await roundTrip(engine, frozen)) as { tags: string[]; inner: { deep: object }; loose: object };
      expect(got, engine).to.deep.equal({ n: 1, tags: ["a"], inner: { deep: { x: 1 } }, loose: { y: 2 } });
      for (const value of [got, got.tags, got.inner, got.inner.deep, got.loose]) expect(Object.isExtensible(value), `${engine}: ${JSON.stringify(value)}`).to.equal(true);
    }
  });

  it("gives the next task its own copy: a task changing what it received changes neither the producer's value, nor the next run's input, nor the outcome", async () => {
    for (const engine of ["memory", "embedded"] as const) {
      const app = makeApp(engine, `copies-${engine}`);
      const DEFAULTS = { count: 0, tags: ["a"] };
      const seen: number[] = [];
      const outcomes: unknown[] = [];
      app.onOutcome((_id, outcome) => void (outcome.ok && outcome.value !== undefined && outcomes.push(outcome.value)));
      app.task({ source: "in", emit: "out", name: "produce" }, async () => DEFAULTS);
      app.task({ source: "out", name: "consume" }, async (_ctx, got: { count: number; tags: string[] }) => {
        got.count++;
        got.tags.push("changed");
        seen.push(got.count);
      });
      await app.start();
      for (const id of ["e0", "e1"]) await app.store.enqueue("in", { id, payload: {}, attempts: 0, enqueuedAt: Date.now() });
      await until(() => seen.length === 2);
      expect(seen, engine).to.deep.equal([1, 1]);
      expect(DEFAULTS, engine).to.deep.equal({ count: 0, tags: ["a"] });
      expect(outcomes, engine).to.deep.equal([{ count: 0, tags: ["a"] }, { count: 0, tags: ["a"] }]);
      for (const started of apps.splice(0)) await started.stop({ timeoutMs: 2_000 });
      rmSync(join(dir, "data"), { recursive: true, force: true });
    }
  });

  it("gives the next task the same keys on every engine when a key is not well-formed UTF-16", async () => {
    // JSON.parse makes such keys from "\ud800" escapes; MessagePack writes them as UTF-8, which has no lone surrogates.
    const value = () => JSON.parse('{"\\ud800k": "v", "nested": {"x\\udc00": 1, "ok": [1]}}') as unknown;
    const got = [];
    for (const engine of ENGINES) got.push(await roundTrip(engine, value));
    expect(got[0], "memory as embedded").to.deep.equal(got[1]);
    expect(got[2], "embedded after a restart as embedded").to.deep.equal(got[1]);
    expect(got[0], "memory as storedForm").to.deep.equal(storedForm(value()));
  });

  it("storedForm tells the same without a store, with an UnstorableValueError carrying the path", () => {
    const error = (() => {
      try {
        storedForm({ a: [{ f: () => 1 }] });
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(error).to.be.instanceOf(UnstorableValueError);
    expect((error as UnstorableValueError).path).to.equal("result.a[0].f");
    expect(storedForm({ d: new Date(5) })).to.deep.equal({ d: new Date(5) });
  });
});
