import { expect } from "chai";
import pg from "pg";
import type { EventNote } from "../../../src/store/history";
import { PostgresStore } from "../../../src/store/postgres/postgres-store";
import { startThrowawayPostgres, type ThrowawayPostgres } from "../../helpers/throwaway-postgres";
import { recordingLogger, until, type LogLine } from "../../helpers/wait";
import { message } from "../store-conformance";
import { PostgresFixture } from "./postgres-fixture";

const T0 = 1_750_000_000_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function note(id: string): EventNote {
  return { id, origin: { kind: "webhook", source: "s" }, receivedAt: T0, deliveries: [{ task: "t", queue: "webhook:t", messageId: id }], payload: { body: { id }, headers: {} } };
}

describe("PostgresStore history when its statements fail", function () {
  this.timeout(60_000);

  describe("on a database that stops", () => {
    let cluster: ThrowawayPostgres;
    const stores: PostgresStore[] = [];
    before(async () => {
      cluster = await startThrowawayPostgres();
    });
    after(async () => {
      for (const store of stores.splice(0)) await store.close();
      await cluster?.destroy();
    });

    function makeStore(lines: LogLine[], schema: string): PostgresStore {
      const store = new PostgresStore({
        connectionString: cluster.url,
        schema,
        logger: recordingLogger(lines),
        statementTimeoutMs: 1_000,
        connectionTimeoutMs: 500,
        probeIntervalMs: 200,
        historyWriter: { delayMs: 20, tries: 6, retryMs: 200, maxBatchNotes: 10 },
      });
      stores.push(store);
      return store;
    }

    it("keeps notes through a short outage, drops (counted, logged, a few lines) those of a long one, never throws, and writes again after", async () => {
      const lines: LogLine[] = [];
      const store = makeStore(lines, "history_down");
      await store.open();
      const h = store.history;

      // A short outage, within the writer's tries (0.2 + 0.4 + 0.8 + 1.6 + 3.2 s): nothing lost.
      await cluster.stop("immediate");
      h.noteEvent(note("short-1"));
      h.noteEvent(note("short-2"));
      await sleep(400);
      await cluster.start();
      await h.flush();
      expect(h.writes.lost).to.equal(0);
      await until(async () => (await h.get("short-2").catch(() => undefined)) !== undefined, 10_000);

      // A long one: the first batch gets its tries, then goes with the four queued behind it (a
      // flush waits for one batch's tries, not five); the writer never throws, the app never waits.
      await cluster.stop("immediate");
      for (let i = 0; i < 50; i++) h.noteEvent(note(`long-${i}`));
      const started = Date.now();
      await h.flush();
      expect(Date.now() - started).to.be.below(12_000);
      expect(h.writes.lost).to.equal(50);
      const errors = lines.filter((l) => l.fields?.kind === "history");
      expect(errors.length, JSON.stringify(errors)).to.be.within(1, 6);
      expect(errors.some((l) => l.fields?.lost === 50)).to.equal(true);

      await cluster.start();
      await until(() => store.failure === undefined, 10_000);
      h.noteEvent(note("after"));
      await h.flush();
      await until(async () => (await h.get("after").catch(() => undefined)) !== undefined, 10_000);
      expect(await h.get("long-0")).to.equal(undefined);
      expect(lines.some((l) => /written again/.test(l.msg))).to.equal(true);
    });

    it("closes at once with notes waiting while the database is down", async () => {
      const store = makeStore([], "history_close_down");
      await store.open();
      await cluster.stop("immediate");
      for (let i = 0; i < 10; i++) store.history.noteEvent(note(`n${i}`));
      const started = Date.now();
      await store.close();
      expect(Date.now() - started).to.be.below(5_000);
      await cluster.start();
    });
  });

  describe("on a table locked by someone else", () => {
    const fixture = new PostgresFixture();
    afterEach(() => fixture.cleanup());

    it("never holds up the queues nor marks the store failing; the notes are written once the lock goes", async () => {
      const schema = fixture.schema();
      const store = fixture.store({ schema, statementTimeoutMs: 300, historyWriter: { delayMs: 10, tries: 10, retryMs: 200 } });
      await store.open();
      const locker = new pg.Client({ connectionString: fixture.url });
      await locker.connect();
      try {
        await locker.query("BEGIN");
        await locker.query(`LOCK TABLE "${schema}".history_events IN ACCESS EXCLUSIVE MODE`);
        for (let i = 0; i < 20; i++) store.history.noteEvent(note(`locked-${i}`));
        await sleep(100);
        // The writer waits on the lock; the queues go on as ever.
        const started = Date.now();
        for (let i = 0; i < 20; i++) {
          await store.enqueue("q", message(`m${i}`));
          const [claimed] = await store.claim("q", 1);
          await store.complete("q", claimed.id);
        }
        expect(Date.now() - started).to.be.below(2_000);
        expect(store.failure).to.equal(undefined);
        await sleep(800);
        expect(store.failure).to.equal(undefined);
        await locker.query("COMMIT");
      } finally {
        await locker.end();
      }
      await store.history.flush();
      expect(store.history.writes.lost).to.equal(0);
      expect((await store.history.size()).events).to.equal(20);
    });
  });
});
