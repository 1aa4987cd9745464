import { expect } from "chai";
import pg from "pg";
import { CoreApp } from "../../../src/app/core-app";
import { PostgresStore } from "../../../src/store/postgres/postgres-store";
import { StoreRefusedError } from "../../../src/store/store-errors";
import { startThrowawayPostgres, type ThrowawayPostgres } from "../../helpers/throwaway-postgres";
import { recordingLogger, until, type LogLine } from "../../helpers/wait";
import { postJson } from "../../helpers/http-client";
import { Collector, webhook } from "../../helpers/app";
import { message, rejection } from "../store-conformance";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Milliseconds a promise takes to settle, and how. */
async function timed(promise: Promise<unknown>): Promise<{ ms: number; error: unknown }> {
  const started = Date.now();
  const error = await rejection(promise).catch(() => undefined);
  return { ms: Date.now() - started, error };
}

describe("PostgresStore when its database stops, restarts or freezes", function () {
  this.timeout(90_000);
  let cluster: ThrowawayPostgres;
  const stores: PostgresStore[] = [];
  let app: CoreApp | undefined;
  before(async () => {
    cluster = await startThrowawayPostgres();
  });
  after(async () => {
    await cluster?.destroy();
  });
  afterEach(async () => {
    cluster.thaw();
    await app?.stop({ timeoutMs: 2_000 });
    app = undefined;
    for (const store of stores.splice(0)) await store.close();
    await cluster.start().catch(() => undefined);
  });

  function makeStore(lines: LogLine[], schema: string): PostgresStore {
    const store = new PostgresStore({
      connectionString: cluster.url,
      schema,
      logger: recordingLogger(lines),
      statementTimeoutMs: 1_000,
      connectionTimeoutMs: 1_000,
      probeIntervalMs: 200,
      depthRefreshMs: 200,
      leaseMs: 1_000,
    });
    stores.push(store);
    return store;
  }

  it("refuses at once while the database is down, rejects writes fast, logs a few lines, and takes work again once it is back; nothing is lost", async () => {
    const lines: LogLine[] = [];
    const store = makeStore(lines, "faults_down");
    await store.open();
    await store.enqueue("q", message("m1"));
    await store.enqueue("q", message("m2"));
    expect((await store.claim("q", 1)).map((m) => m.id)).to.deep.equal(["m1"]);

    await cluster.stop("immediate");
    await until(() => store.admit("q")?.code === "store_unavailable", 3_000);
    expect(store.failure).to.be.instanceOf(Error);
    const refused = await timed(store.enqueue("q", message("m3")));
    expect(refused.error).to.be.instanceOf(StoreRefusedError);
    expect((refused.error as StoreRefusedError).refusal).to.include({ code: "store_unavailable" });
    expect(refused.ms).to.be.lessThan(50);
    // A write that skips admission still fails within its bounds, never hangs.
    const internal = await timed(store.enqueue("q", message("m3"), { internal: true }));
    expect(internal.error).to.be.instanceOf(StoreRefusedError);
    expect(internal.ms).to.be.lessThan(3_000);
    const claim = await timed(store.claim("q", 1));
    expect(claim.error).to.be.instanceOf(StoreRefusedError);

    await sleep(3_000);
    const errors = lines.filter((l) => /cannot reach PostgreSQL/.test(l.msg));
    // Every probe failed (15 or so in 3 s); the log says so once, maybe twice.
    expect(errors.length).to.be.within(1, 2);

    await cluster.start();
    await until(() => store.admit("q") === undefined && store.failure === undefined, 10_000);
    expect(lines.some((l) => /reaches PostgreSQL again/.test(l.msg))).to.equal(true);
    await store.enqueue("q", message("m4"));
    // m1, claimed before the outage, is finished now: whether its lease was renewed again or
    // taken back meanwhile, completing it removes it.
    await store.complete("q", "m1");
    const rest = await store.claim("q", 10);
    expect(rest.map((m) => [m.id, m.attempts])).to.deep.equal([
      ["m2", 0],
      ["m4", 0],
    ]);
    for (const m of rest) await store.complete("q", m.id);
    expect(await store.depth("q")).to.equal(0);
  });

  it("turns a frozen database into a refusal within the statement limit, and recovers when it answers again", async () => {
    const lines: LogLine[] = [];
    const store = makeStore(lines, "faults_frozen");
    await store.open();
    await store.enqueue("q", message("m1"));
    cluster.freeze();
    const stuck = await timed(store.enqueue("q", message("m2")));
    expect(stuck.error).to.be.instanceOf(StoreRefusedError);
    // Statement limit 1 s, plus a second for a server that answers nothing.
    expect(stuck.ms).to.be.lessThan(3_500);
    expect(store.admit("q")?.code).to.equal("store_unavailable");
    cluster.thaw();
    await until(() => store.admit("q") === undefined, 10_000);
    await store.enqueue("q", message("m3"));
    expect(await store.depth("q")).to.be.at.least(2);
  });

  it("listens again once the database is back: the other store is woken by a notification", async () => {
    const a = makeStore([], "faults_listen");
    const b = makeStore([], "faults_listen");
    await a.open();
    await b.open();
    await cluster.stop("fast");
    await until(() => a.failure !== undefined && b.failure !== undefined, 3_000);
    // Long enough for the listener's pause between tries to grow past a few seconds.
    await sleep(5_000);
    await cluster.start();
    await until(() => a.failure === undefined && b.failure === undefined, 10_000);
    await sleep(300);
    const woke = new Promise<number>((resolve) => {
      const started = Date.now();
      b.watch("q", () => resolve(Date.now() - started));
    });
    await a.enqueue("q", message("m1"));
    const ms = await Promise.race([woke, sleep(2_000).then(() => Infinity)]);
    expect(ms).to.be.lessThan(1_000);
  });

  it("opens while the database is down, refusing work until it comes up", async () => {
    await cluster.stop("fast");
    const lines: LogLine[] = [];
    const store = makeStore(lines, "faults_late");
    await store.open();
    expect(store.failure).to.be.instanceOf(Error);
    expect(store.admit("q")?.code).to.equal("store_unavailable");
    await cluster.start();
    await until(() => store.admit("q") === undefined, 10_000);
    await store.enqueue("q", message("m1"));
    expect((await store.claim("q", 1)).map((m) => m.id)).to.deep.equal(["m1"]);
  });

  it("opens a schema made beforehand with a role that may not create schemas; refuses a role that may use none", async () => {
    const admin = new pg.Client({ connectionString: cluster.url });
    await admin.connect();
    try {
      await admin.query("CREATE ROLE limited LOGIN; CREATE SCHEMA premade AUTHORIZATION limited");
    } finally {
      await admin.end();
    }
    const limitedUrl = cluster.url.replace("postgres://postgres@", "postgres://limited@");
    const store = new PostgresStore({ connectionString: limitedUrl, schema: "premade" });
    stores.push(store);
    await store.open();
    await store.enqueue("q", message("m1"));
    expect(await store.depth("q")).to.equal(1);
    const refused = new PostgresStore({ connectionString: limitedUrl, schema: "not_made" });
    stores.push(refused);
    const error = (await rejection(refused.open())) as Error;
    expect(error.message).to.match(/cannot open schema "not_made": permission denied/);
  });

  it("an app answers 503 with Retry-After while the database is down, and runs every accepted event once it is back", async () => {
    const lines: LogLine[] = [];
    const store = makeStore(lines, "faults_app");
    const events = new Collector();
    app = new CoreApp("pg-faults", { store, logger: recordingLogger(lines) });
    const source = webhook();
    app.task({ source, name: "receive" }, events.handler);
    await app.start();
    const url = `http://127.0.0.1:${source.port}/hook`;
    expect((await postJson(url, { n: 1 })).status).to.be.within(200, 299);
    await events.waitFor(1);
    // Its outcome committed (else the outage would make it run again: at-least-once).
    await until(async () => (await store.depth(app!.tasks[0].queue)) === 0, 3_000);

    await cluster.stop("fast");
    await until(() => store.failure !== undefined, 3_000);
    const down = await postJson(url, { n: 2 });
    expect(down.status).to.equal(503);
    expect(Number(down.headers.get("retry-after"))).to.be.greaterThan(0);

    await cluster.start();
    await until(() => store.failure === undefined, 10_000);
    expect((await postJson(url, { n: 3 })).status).to.be.within(200, 299);
    await events.waitFor(2, 5_000);
    expect(events.events.map((e) => (e.body as { n: number }).n)).to.deep.equal([1, 3]);
  });
  it("an app starts while the database is down, holds a task paused before the restart, and runs its events once resumed", async () => {
    const lines: LogLine[] = [];
    const before = new CoreApp("pg-paused-start", { store: makeStore(lines, "faults_paused_start"), logger: recordingLogger(lines) });
    before.task({ source: webhook(), name: "receive" }, async () => undefined);
    await before.start();
    await before.pause("receive");
    await before.stop({ timeoutMs: 2_000 });

    await cluster.stop("fast");
    const store = makeStore(lines, "faults_paused_start");
    const events = new Collector();
    app = new CoreApp("pg-paused-start", { store, logger: recordingLogger(lines), metrics: true });
    const source = webhook();
    app.task({ source, name: "receive" }, events.handler);
    // Started, answering 503 until the database is back; every task held until the paused set is read.
    await app.start();
    expect(app.readiness().ready).to.equal(false);
    expect(await app.metrics?.metrics()).to.match(/^webhook_task_paused\{task="receive"\} 1$/m);
    expect((await postJson(`http://127.0.0.1:${source.port}/hook`, { n: 0 })).status).to.equal(503);

    // Read again every second meanwhile, said once (not once a second).
    await sleep(2_500);
    expect(lines.filter((l) => /cannot read the paused tasks/.test(l.msg))).to.have.length(1);
    await cluster.start();
    await until(() => store.failure === undefined, 10_000);
    expect((await postJson(`http://127.0.0.1:${source.port}/hook`, { n: 1 })).status).to.be.within(200, 299);
    // The pause holds: the task was paused before the restart, and the database says so once it answers.
    await sleep(1_500);
    expect(events.events.length).to.equal(0);
    expect(await app.paused()).to.deep.equal(["receive"]);
    await app.resume("receive");
    await events.waitFor(1, 5_000);
  });
});
