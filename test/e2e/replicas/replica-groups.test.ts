import { expect } from "chai";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { ChildApp } from "../child-app";
import { pool, post, report, replicaFixture, waitFor, type RunRow, type TestSchemas } from "./replica-harness";

/** Runs recorded by the replicas, by run (one row per event of the run). */
function byRun(rows: readonly RunRow[]): Map<string, RunRow[]> {
  const runs = new Map<string, RunRow[]>();
  for (const row of rows) {
    const list = runs.get(row.event_id);
    if (list === undefined) runs.set(row.event_id, [row]);
    else list.push(row);
  }
  return runs;
}

async function processed(schemas: TestSchemas): Promise<number> {
  return ((await schemas.sql(`SELECT count(DISTINCT request)::int AS n FROM "${schemas.results}".runs`))[0] as { n: number }).n;
}

/**
 * Sends `bursts` bursts of `size` events at once (one key per burst, each burst's events one after
 * another), each event to the next live replica. Returns the longest gap between two events of a burst.
 */
async function sendBursts(alive: () => readonly ChildApp[], bursts: number, size: number, onAnswered?: (answered: number) => void): Promise<{ longestGap: number; accepted: Set<string> }> {
  let longestGap = 0;
  let answered = 0;
  const accepted = new Set<string>();
  await Promise.all(
    Array.from({ length: bursts }, async (_, b) => {
      let last = Date.now();
      for (let n = 0; n < size; n++) {
        const request = `b${b}-${n}`;
        for (let attempt = 0; ; attempt++) {
          const targets = alive();
          const answer = await post(targets[(b + n + attempt) % targets.length]!.base, { key: `burst-${b}`, seq: n }, { "x-request-id": request });
          if (answer.status >= 200 && answer.status < 300) break;
          if (answer.status !== 0) throw new Error(`request ${request} answered ${answer.status}`);
          if (attempt > 5) throw new Error(`request ${request} never accepted`);
        }
        accepted.add(request);
        longestGap = Math.max(longestGap, Date.now() - last);
        last = Date.now();
        onAnswered?.(++answered);
      }
    }),
  );
  return { longestGap, accepted };
}

/** Checks each run is one whole burst: its key's `size` events, the newest handed as `event`. */
function expectWholeBursts(runs: Map<string, RunRow[]>, size: number): void {
  for (const [run, rows] of runs) {
    const keys = new Set(rows.map((r) => r.key));
    expect(keys.size, `keys in run ${run}`).to.equal(1);
    expect(rows.map((r) => r.seq).sort((a, b) => a! - b!), `events of run ${run} (${[...keys][0]})`).to.deep.equal(Array.from({ length: size }, (_, n) => n));
    expect(rows.filter((r) => r.first).map((r) => r.seq), `newest event of run ${run}`).to.deep.equal([size - 1]);
  }
}

describe("replicas on PostgreSQL: debounce and batch across processes", function () {
  this.timeout(120_000);
  const fixture = replicaFixture("replica-groups-");

  it("debounce: 20 bursts of 50 events sent to three replicas run exactly 20 times, each with all 50 events of its burst", async () => {
    const { schemas } = fixture;
    const replicas = await fixture.start(3, () => schemas.env({ MODE: "debounce", GROUP_WAIT_MS: "1500", CONCURRENCY: "8" }));
    const { longestGap, accepted } = await sendBursts(() => replicas, 20, 50);
    // A burst is events closer than the period: a machine too slow to send them so says so here.
    expect(longestGap, "longest gap between two events of a burst").to.be.below(1_500);
    expect(accepted.size).to.equal(1_000);
    await waitFor(async () => (await processed(schemas)) >= 1_000, 60_000, async () => `${await processed(schemas)} of 1000 processed`);
    // Time for a second run of a burst, if one were to happen.
    await new Promise((r) => setTimeout(r, 2_000));
    const rows = await schemas.runs();
    const runs = byRun(rows);
    expect(runs.size, "runs").to.equal(20);
    expect(rows, "rows: each event in one run, once").to.have.length(1_000);
    expectWholeBursts(runs, 50);
    const perReplica = new Map<string, number>();
    for (const [, [row]] of runs) perReplica.set(row!.replica, (perReplica.get(row!.replica) ?? 0) + 1);
    report(`20 bursts x 50 events over 3 replicas (longest gap ${longestGap} ms): 20 runs of 50; runs per replica ${[...perReplica].map(([r, n]) => `${r}=${n}`).join(" ")}`);
  });

  it("batch { maxSize: 10 }: 600 events sent to three replicas run in batches of at most 10, each event once", async () => {
    const { schemas } = fixture;
    const replicas = await fixture.start(3, () => schemas.env({ MODE: "batch", BATCH_SIZE: "10", GROUP_WAIT_MS: "300", CONCURRENCY: "4" }));
    const items = Array.from({ length: 600 }, (_, n) => n);
    await pool(items, 24, async (n) => {
      const answer = await post(replicas[n % 3]!.base, { key: "all", seq: n }, { "x-request-id": `q${n}` });
      if (answer.status !== 202) throw new Error(`request q${n} answered ${answer.status}`);
    });
    await waitFor(async () => (await processed(schemas)) >= 600, 60_000, async () => `${await processed(schemas)} of 600 processed`);
    await new Promise((r) => setTimeout(r, 600));
    const rows = await schemas.runs();
    expect(rows, "each event in one batch, once").to.have.length(600);
    expect(new Set(rows.map((r) => r.request)).size).to.equal(600);
    const sizes = [...byRun(rows).values()].map((r) => r.length);
    expect(Math.max(...sizes), `batch sizes ${sizes.join(",")}`).to.be.at.most(10);
    const replicasThatRan = new Set(rows.map((r) => r.replica));
    const full = sizes.filter((s) => s === 10).length;
    report(`600 events over 3 replicas, batch maxSize 10: ${sizes.length} batches (${full} full), largest ${Math.max(...sizes)}; replicas that ran batches ${replicasThatRan.size}`);
  });

  it("debounce: a replica SIGKILLed while its bursts collect loses none of their events", async () => {
    const { schemas } = fixture;
    const replicas = await fixture.start(3, () => schemas.env({ MODE: "debounce", GROUP_WAIT_MS: "2000", CONCURRENCY: "8", LEASE_MS: "1500" }));
    const [victim, ...survivors] = replicas as [ChildApp, ...ChildApp[]];
    let killed: Promise<unknown> | undefined;
    let dead = false;
    const { longestGap, accepted } = await sendBursts(
      () => (dead ? survivors : replicas),
      10,
      20,
      (answered) => {
        if (answered !== 100) return;
        // Half of every burst taken in, a third of it by the victim, none of them due yet.
        dead = true;
        killed = victim.kill("SIGKILL");
      },
    );
    await killed;
    expect(longestGap, "longest gap between two events of a burst").to.be.below(2_000);
    expect(accepted.size).to.equal(200);
    await waitFor(async () => (await processed(schemas)) >= 200, 60_000, async () => `${await processed(schemas)} of 200 processed`);
    await new Promise((r) => setTimeout(r, 2_500));
    const rows = await schemas.runs();
    const runs = byRun(rows);
    expect(rows.filter((r) => r.replica === "r0"), "runs of the killed replica").to.deep.equal([]);
    expect(runs.size, "one run per burst").to.equal(10);
    expectWholeBursts(runs, 20);
    report(`10 bursts x 20 events, a replica SIGKILLed after 100 answers: 10 runs of 20 on the survivors, none lost`);
  });

  it("debounce: bursts whose runs a SIGKILL cut short run again whole on another replica once the leases end", async () => {
    const { schemas, dir } = fixture;
    const starts = (i: number) => join(dir, `starts-r${i}.log`);
    const replicas = await fixture.start(3, (i) =>
      schemas.env({ MODE: "debounce", GROUP_WAIT_MS: "1000", CONCURRENCY: "2", LEASE_MS: "1500", HANDLER_DELAY_MS: "2500", STARTS_FILE: starts(i) }),
    );
    const { longestGap, accepted } = await sendBursts(() => replicas, 6, 10);
    expect(longestGap, "longest gap between two events of a burst").to.be.below(1_000);
    expect(accepted.size).to.equal(60);
    // Killed as soon as one replica has a run going.
    let victim = -1;
    await waitFor(
      async () => (victim = replicas.findIndex((_, i) => existsSync(starts(i)) && readFileSync(starts(i), "utf8").length > 0)) >= 0,
      10_000,
      () => "no run started",
    );
    await replicas[victim]!.kill("SIGKILL");
    const cut = readFileSync(starts(victim), "utf8").split("\n").filter(Boolean).length;
    await waitFor(async () => (await processed(schemas)) >= 60, 60_000, async () => `${await processed(schemas)} of 60 processed`);
    await new Promise((r) => setTimeout(r, 1_000));
    const rows = await schemas.runs();
    const runs = byRun(rows);
    expect(rows.filter((r) => r.replica === `r${victim}`), "runs the killed replica finished").to.deep.equal([]);
    expect(runs.size, "one finished run per burst").to.equal(6);
    expectWholeBursts(runs, 10);
    const again = [...runs.values()].filter((r) => r[0]!.attempt === 2).length;
    const lines = replicas.map((_, i) => (existsSync(starts(i)) ? readFileSync(starts(i), "utf8").trim().replaceAll("\n", ", ") : "")).join(" | ");
    const seen = [...runs].map(([run, r]) => `${run}:${r[0]!.key}@${r[0]!.attempt}`).join(" ");
    expect(again, `bursts run again after the kill, the attempt counted (starts ${lines}; runs ${seen})`).to.equal(cut);
    report(`6 bursts x 10 events, 3 replicas, one SIGKILLed with ${cut} runs going: those ran again whole (attempt 2), 6 runs in all, none lost`);
  });
});
