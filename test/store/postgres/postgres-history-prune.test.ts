import { createConnection, createServer, type Server } from "node:net";
import { expect } from "chai";
import pg from "pg";
import type { EventNote, RunNote } from "../../../src/store/history";
import type { PostgresStore } from "../../../src/store/postgres/postgres-store";
import { closeTogether } from "../../helpers/socket-pair";
import { PostgresFixture } from "./postgres-fixture";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function event(id: string, receivedAt: number): EventNote {
  return { id, origin: { kind: "webhook", source: "s" }, receivedAt, deliveries: [{ task: "t", queue: "webhook:t", messageId: id }], payload: { body: { id, pad: "x".repeat(200) }, headers: {} } };
}

function ran(id: string, at: number): RunNote {
  return { eventId: id, run: { task: "t", attempt: 1, startedAt: at, durationMs: 1, outcome: "success" }, status: "succeeded" };
}

/** A TCP proxy to the test server that stops passing the answers of a connection once it sends `text`: the network stalls. */
async function stallingProxy(target: URL, text: string): Promise<{ server: Server; port: number; stalled: () => boolean }> {
  let stalled = false;
  const server = createServer((client) => {
    const upstream = createConnection(Number(target.port || 5432), target.hostname);
    let passing = true;
    upstream.on("data", (chunk) => passing && client.write(chunk));
    client.on("data", (chunk) => {
      if (chunk.includes(text)) {
        passing = false;
        stalled = true;
        return;
      }
      upstream.write(chunk);
    });
    closeTogether(client, upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, port: (server.address() as { port: number }).port, stalled: () => stalled };
}

describe("PostgresStore history pruning", function () {
  this.timeout(60_000);
  const fixture = new PostgresFixture();
  afterEach(() => fixture.cleanup());

  async function rows(schema: string): Promise<{ events: number; runs: number }> {
    const client = new pg.Client({ connectionString: fixture.url });
    await client.connect();
    try {
      const { rows: r } = await client.query(
        `SELECT (SELECT count(*) FROM "${schema}".history_events) AS events, (SELECT count(*) FROM "${schema}".history_runs) AS runs`,
      );
      return { events: Number(r[0].events), runs: Number(r[0].runs) };
    } finally {
      await client.end();
    }
  }

  it("keeps the row count flat under steady load with a short retainMs, two replicas pruning at once", async () => {
    const schema = fixture.schema();
    const a = fixture.store({ schema, historyWriter: { delayMs: 20 } });
    const b = fixture.store({ schema, historyWriter: { delayMs: 20 } });
    await a.open();
    await b.open();
    const retainMs = 600;
    const perTick = 25;
    const tickMs = 20;
    let stop = false;
    let n = 0;
    // Steady load: 25 events (and their runs) every 20 ms, half through each replica.
    const load = (async () => {
      while (!stop) {
        const now = Date.now();
        for (let i = 0; i < perTick; i++) {
          const store = n % 2 === 0 ? a : b;
          const id = `e${n++}`;
          store.history.noteEvent(event(id, now));
          store.history.noteRun(ran(id, now));
        }
        await sleep(tickMs);
      }
    })();
    const pruned = { a: 0, b: 0 };
    const prune = async (store: PostgresStore, key: "a" | "b") => {
      while (!stop) {
        pruned[key] += await store.history.prune(Date.now() - retainMs);
        await sleep(100);
      }
    };
    const pruners = [prune(a, "a"), prune(b, "b")];
    const samples: Array<{ events: number; runs: number }> = [];
    await sleep(1_500);
    for (let i = 0; i < 10; i++) {
      samples.push(await rows(schema));
      await sleep(300);
    }
    stop = true;
    await load;
    await Promise.all(pruners);
    await a.history.flush();
    await b.history.flush();
    // About retainMs (+ a pruning interval and the writer's delay) of load: ~1,250 per second.
    const rate = (perTick * 1_000) / tickMs;
    const bound = rate * ((retainMs + 100 + 300) / 1_000) * 1.5;
    const counts = samples.map((s) => s.events);
    expect(Math.max(...counts), JSON.stringify(counts)).to.be.below(bound);
    expect(Math.min(...counts), JSON.stringify(counts)).to.be.above(rate * (retainMs / 1_000) * 0.3);
    // Flat: the last samples are no larger than the first ones (within noise), though 3,000+ more events came.
    const firstHalf = counts.slice(0, 5).reduce((x, y) => x + y, 0) / 5;
    const secondHalf = counts.slice(5).reduce((x, y) => x + y, 0) / 5;
    expect(secondHalf, JSON.stringify(counts)).to.be.below(firstHalf * 1.5);
    for (const s of samples) expect(s.runs).to.be.below(bound);
    expect(n).to.be.above(3_000);
    // Both replicas did part of it, and nothing was counted twice.
    const left = await rows(schema);
    expect(pruned.a + pruned.b + left.events).to.equal(n);
    expect(pruned.a).to.be.above(0);
    expect(pruned.b).to.be.above(0);
  });

  it("prunes a large backlog in bounded statements, and the runs whose event never came", async () => {
    const schema = fixture.schema();
    const store = fixture.store({ schema });
    await store.open();
    const h = store.history;
    const old = Date.now() - 3_600_000;
    for (let i = 0; i < 4_500; i++) {
      h.noteEvent(event(`old${i}`, old + i));
      h.noteRun(ran(`old${i}`, old + i));
    }
    // A run whose event was never written (its replica died before its batch).
    h.noteRun(ran("orphan", old));
    h.noteEvent(event("new", Date.now()));
    await h.flush();
    expect(await h.prune(Date.now() - 60_000)).to.equal(4_500);
    expect((await h.list({})).events.map((e) => e.id)).to.deep.equal(["new"]);
    expect(await rows(schema)).to.deep.equal({ events: 1, runs: 0 });
  });
  it("gives up a count bound's prune whose connection stalls within the statement limit, not never", async () => {
    const target = new URL(fixture.url);
    const proxy = await stallingProxy(target, "pg_try_advisory_xact_lock");
    try {
      const proxied = new URL(fixture.url);
      proxied.port = String(proxy.port);
      const store = fixture.store({ connectionString: proxied.toString(), statementTimeoutMs: 500, connectionTimeoutMs: 500 });
      await store.open();
      const started = Date.now();
      const outcome = await store.history.prune(0, 10).then(
        () => "done",
        () => "failed",
      );
      expect(proxy.stalled()).to.equal(true);
      expect(outcome).to.equal("failed");
      expect(Date.now() - started).to.be.below(5_000);
    } finally {
      proxy.server.close();
    }
  });
});
