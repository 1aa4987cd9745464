import { expect } from "chai";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { ChildApp } from "../child-app";
import { maxOverlapPerKey, maxStartsPerWindow } from "../../helpers/flow-measures";
import { pool, post, report, replicaFixture, waitFor, type TestSchemas } from "./replica-harness";

const EVENTS = 3000;
const KEYS = 300;
const LEASE_MS = 2000;

/** Bodies of the load: bursts of one key (10 events in a row), 300 keys. */
const body = (n: number) => ({ key: `k${Math.floor(n / (EVENTS / KEYS))}`, seq: n });

async function sendAll(replicas: readonly ChildApp[], count: number, inFlight: number, onAnswered?: (answered: number) => void, alive = () => replicas): Promise<Set<string>> {
  const accepted = new Set<string>();
  let answered = 0;
  await pool(
    Array.from({ length: count }, (_, n) => n),
    inFlight,
    async (n, i) => {
      for (let attempt = 0; ; attempt++) {
        const targets = alive();
        const answer = await post(targets[(i + attempt) % targets.length]!.base, body(n), { "x-request-id": `q${n}` });
        if (answer.status >= 200 && answer.status < 300) break;
        if (answer.status !== 0) throw new Error(`request q${n} answered ${answer.status}`);
        if (attempt > 5) throw new Error(`request q${n} never accepted`);
      }
      accepted.add(`q${n}`);
      onAnswered?.(++answered);
    },
  );
  return accepted;
}

async function processed(schemas: TestSchemas): Promise<number> {
  return ((await schemas.sql(`SELECT count(DISTINCT request)::int AS n FROM "${schemas.results}".runs`))[0] as { n: number }).n;
}

describe("replicas on PostgreSQL: flow limits across processes", function () {
  this.timeout(120_000);
  const fixture = replicaFixture("replica-flow-");

  it("concurrency { limit: 2, key }: 3,000 events over 300 keys on three replicas, at most 2 of a key at once across them, some key at 2", async () => {
    const { schemas } = fixture;
    const replicas = await fixture.start(3, () => schemas.env({ MODE: "keyed", KEY_LIMIT: "2", CONCURRENCY: "16", LEASE_MS: String(LEASE_MS) }));
    const accepted = await sendAll(replicas, EVENTS, 48);
    expect(accepted.size).to.equal(EVENTS);
    await waitFor(async () => (await processed(schemas)) >= EVENTS, 60_000, async () => `${await processed(schemas)} of ${EVENTS} processed`);
    const runs = await schemas.runs();
    const overlap = maxOverlapPerKey(runs.map((r) => ({ key: r.key!, n: r.seq!, start: r.started, end: r.ended })));
    const max = Math.max(...overlap.values());
    const atTwo = [...overlap.values()].filter((n) => n === 2).length;
    expect(max, "most runs of one key at once, across the replicas").to.equal(2);
    expect(runs).to.have.length(EVENTS);
    const byReplica = new Map<string, number>();
    for (const r of runs) byReplica.set(r.replica, (byReplica.get(r.replica) ?? 0) + 1);
    expect(byReplica.size, "every replica ran some").to.equal(3);
    report(`${EVENTS} events, ${KEYS} keys, 3 replicas: most at once per key ${max} (${atTwo} keys reached 2); runs per replica ${[...byReplica.values()].join("/")}`);
  });

  it("concurrency { limit: 2, key } with one replica SIGKILLed mid-run: never 3 of a key at once, nothing lost", async () => {
    const { schemas, dir } = fixture;
    const starts = (i: number) => join(dir, `starts-r${i}.log`);
    const replicas = await fixture.start(3, (i) =>
      schemas.env({ MODE: "keyed", KEY_LIMIT: "2", CONCURRENCY: "16", HANDLER_DELAY_MS: "40", LEASE_MS: String(LEASE_MS), STARTS_FILE: starts(i) }),
    );
    const [victim, ...survivors] = replicas as [ChildApp, ...ChildApp[]];
    let killedAt = 0;
    let killing: Promise<unknown> | undefined;
    const accepted = await sendAll(
      replicas,
      EVENTS,
      48,
      (answered) => {
        if (answered !== EVENTS / 3) return;
        // Killed while it has a run going: a start in its file that its runs table lacks.
        killing = (async () => {
          // Polled until it has one (at once, usually; later on a machine busy with other tests).
          for (let i = 0; i < 2_000; i++) {
            const started = existsSync(starts(0)) ? readFileSync(starts(0), "utf8").split("\n").filter(Boolean).length : 0;
            if (started > (await schemas.count("replica = 'r0'"))) break;
            await new Promise((r) => setTimeout(r, 5));
          }
          killedAt = Date.now();
          await victim.kill("SIGKILL");
        })();
      },
      () => (killedAt === 0 ? replicas : survivors),
    );
    await killing;
    expect(accepted.size).to.equal(EVENTS);
    await waitFor(async () => (await processed(schemas)) >= EVENTS, 60_000, async () => `${await processed(schemas)} of ${EVENTS} processed`);
    const runs = await schemas.runs();
    // The victim's runs cut short by the kill: started, never recorded; they end at the kill.
    const lines = existsSync(starts(0)) ? readFileSync(starts(0), "utf8").split("\n").filter(Boolean) : [];
    const finished = new Set(runs.filter((r) => r.replica === "r0").map((r) => `${r.event_id}/${r.started}`));
    const cut = lines
      .map((l) => l.split(" "))
      .filter(([, eventId, started]) => !finished.has(`${eventId}/${Number(started)}`))
      .map(([request, , started, key]) => ({ key: key!, n: Number(request!.slice(1)), start: Number(started), end: killedAt }));
    expect(cut.length, "the victim had runs going at the kill").to.be.greaterThan(0);
    const spans = [...runs.map((r) => ({ key: r.key!, n: r.seq!, start: r.started, end: r.ended })), ...cut];
    const overlap = maxOverlapPerKey(spans);
    const max = Math.max(...overlap.values());
    expect(max, "most runs of one key at once, the victim's cut runs included").to.be.at.most(2);
    expect(max).to.equal(2);
    const lost = [...accepted].filter((id) => !runs.some((r) => r.request === id));
    expect(lost, "accepted but never run to the end").to.deep.equal([]);
    report(`${EVENTS} events, one of 3 replicas SIGKILLed after ${EVENTS / 3} answers with ${cut.length} runs going: most at once per key ${max}, none lost`);
  });

  it("rateLimit { limit: 50, periodMs: 1000 } under 200 events/s on two replicas: at most 50 starts in any second, every event run", async () => {
    const { schemas } = fixture;
    const replicas = await fixture.start(2, () => schemas.env({ MODE: "rate", RATE_LIMIT: "50", RATE_PERIOD_MS: "1000", CONCURRENCY: "16" }));
    // 200 events/s for 3 s (the 10 s shortened; the ratio to the limit kept): 600 events.
    const SECONDS = 3;
    const begin = Date.now();
    let sent = 0;
    for (let tick = 0; tick < SECONDS * 10; tick++) {
      await Promise.all(Array.from({ length: 20 }, (_, i) => post(replicas[(tick + i) % 2]!.base, { seq: sent + i }, { "x-request-id": `r${sent + i}` })));
      sent += 20;
      await new Promise((r) => setTimeout(r, Math.max(0, begin + (tick + 1) * 100 - Date.now())));
    }
    await waitFor(async () => (await processed(schemas)) >= sent, 60_000, async () => `${await processed(schemas)} of ${sent} processed`);
    const runs = await schemas.runs();
    const startTimes = runs.map((r) => r.started);
    const inSecond = maxStartsPerWindow(startTimes, 990);
    expect(runs).to.have.length(sent);
    const t0 = Math.min(...startTimes);
    const timeline = runs.map((r) => `${Math.round(r.started - t0)}${r.replica}`).join(" ");
    expect(inSecond, `most starts in any window of 990 ms; starts (ms, replica): ${timeline}`).to.be.at.most(50);
    const buckets = new Map<number, number>();
    for (const t of startTimes) buckets.set(Math.floor(t / 1000), (buckets.get(Math.floor(t / 1000)) ?? 0) + 1);
    expect(Math.max(...buckets.values()), "most starts in one calendar second").to.be.at.most(50);
    const span = (Math.max(...startTimes) - Math.min(...startTimes)) / 1000;
    report(`${sent} events sent at 200/s over ${SECONDS} s to 2 replicas: most starts in a sliding 990 ms window ${inSecond}, per calendar second ${[...buckets.values()].join(" ")}; all run over ${span.toFixed(1)} s`);
  });
});
