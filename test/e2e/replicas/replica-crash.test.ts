import { expect } from "chai";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { ChildApp } from "../child-app";
import { markers, pool, post, report, replicaFixture, waitFor } from "./replica-harness";

const REQUESTS = 6000;
const IN_FLIGHT = 64;
const LEASE_MS = 2000;
const KILL_AFTER = 2000;

describe("replicas on PostgreSQL: one SIGKILLed mid-burst", function () {
  this.timeout(60_000);
  const fixture = replicaFixture("replica-crash-");

  it("the two others finish its claimed events after the lease expires: every 2xx processed, the marked effect exactly once", async () => {
    const { schemas, dir } = fixture;
    const starts = (i: number) => join(dir, `starts-r${i}.log`);
    const replicas = await fixture.start(3, (i) =>
      schemas.env({ MODE: "work", HANDLER_DELAY_MS: "60", CONCURRENCY: "32", LEASE_MS: String(LEASE_MS), STARTS_FILE: starts(i) }),
    );
    const [victim, ...survivors] = replicas as [ChildApp, ...ChildApp[]];
    const ids = Array.from({ length: REQUESTS }, (_, i) => `q${i}`);
    const accepted = new Set<string>();
    let answered = 0;
    let killedAt = 0;
    let killing: Promise<unknown> | undefined;
    let cutOff = 0;

    await pool(ids, IN_FLIGHT, async (id, i) => {
      // Round robin over the replicas alive, as a load balancer does; a request cut off by the
      // kill is sent again to another replica, as a sender retries an unanswered webhook.
      for (let attempt = 0; ; attempt++) {
        const alive = killedAt === 0 ? replicas : survivors;
        const target = alive[(i + attempt) % alive.length]!;
        const answer = await post(target.base, { n: i }, { "x-request-id": id });
        if (answer.status >= 200 && answer.status < 300) {
          accepted.add(id);
          break;
        }
        if (answer.status === 0) cutOff++;
        else throw new Error(`request ${id} answered ${answer.status}`);
        if (attempt > 5) throw new Error(`request ${id} never accepted`);
      }
      if (++answered === KILL_AFTER) {
        killedAt = Date.now();
        killing = victim.kill("SIGKILL");
      }
    });
    await killing;
    const sentDone = Date.now();
    expect(accepted.size).to.equal(REQUESTS);

    // What the victim had started and not finished: its claims at the kill.
    const victimStarts = existsSync(starts(0)) ? readFileSync(starts(0), "utf8").split("\n").filter(Boolean).map((l) => l.split(" ")[0]!) : [];
    const victimRuns = await schemas.count("replica = 'r0'");
    const finishedByVictim = new Set(((await schemas.sql(`SELECT request FROM "${schemas.results}".runs WHERE replica = 'r0'`)) as Array<{ request: string }>).map((r) => r.request));
    const held = victimStarts.filter((id) => !finishedByVictim.has(id));
    expect(victimRuns, "the victim processed events before the kill").to.be.greaterThan(0);
    expect(held.length, "the victim held claims on running tasks at the kill").to.be.greaterThan(0);

    const all = [...accepted];
    const processed = async () => ((await schemas.sql(`SELECT count(DISTINCT request)::int AS n FROM "${schemas.results}".runs`))[0] as { n: number }).n;
    await waitFor(async () => (await processed()) >= REQUESTS, 30_000, async () => `${await processed()} of ${REQUESTS} requests processed`);
    const doneAt = Date.now();
    const runs = await schemas.runs();
    const perRequest = new Map<string, number>();
    const wins = new Map<string, number>();
    for (const run of runs) {
      perRequest.set(run.request!, (perRequest.get(run.request!) ?? 0) + 1);
      if (run.first === true) wins.set(run.request!, (wins.get(run.request!) ?? 0) + 1);
    }
    const lost = all.filter((id) => !perRequest.has(id));
    expect(lost, `accepted but never processed: ${lost.slice(0, 10).join(",")}`).to.deep.equal([]);

    // The held claims went to the survivors, and only after the victim's lease had run out.
    const takeovers = runs.filter((r) => held.includes(r.request!) && r.replica !== "r0");
    expect(takeovers.map((r) => r.request)).to.include.members(held);
    const firstTakeover = Math.min(...takeovers.map((r) => r.started));
    expect(firstTakeover - killedAt, "the held claims were taken over within seconds of the lease").to.be.below(LEASE_MS + 5000);

    // Exactly-once effect: every request has its marker, and no two runs won it.
    const marked = await markers(survivors[0]!, all);
    expect(all.filter((id) => !marked.has(id))).to.deep.equal([]);
    const twice = [...wins].filter(([, n]) => n > 1).map(([id]) => id);
    expect(twice, "two runs won the processed-marker of one request").to.deep.equal([]);

    // At-least-once, counted: handler starts (recorded runs, and those the kill cut short) per request.
    const startsPerRequest = new Map(perRequest);
    for (const id of held) startsPerRequest.set(id, (startsPerRequest.get(id) ?? 0) + 1);
    const repeated = [...startsPerRequest.values()].filter((n) => n > 1).length;
    const extraStarts = runs.length + held.length - REQUESTS;
    const attempts = takeovers.map((r) => r.attempt);
    report(
      `${REQUESTS} requests over 3 replicas, 64 in flight; ${cutOff} cut off by the kill and sent again to a survivor; ` +
        `the victim had run ${victimRuns} and held ${held.length} running at the kill; survivors took them over ${((firstTakeover - killedAt) / 1000).toFixed(2)} s after it ` +
        `(lease ${LEASE_MS} ms; attempt ${Math.min(...attempts)}-${Math.max(...attempts)} there); ` +
        `without dedupe ${repeated} requests ran more than once (${extraStarts} extra handler starts), with the setIfAbsent marker each took effect once; ` +
        `all sent ${((sentDone - killedAt) / 1000).toFixed(1)} s and all processed ${((doneAt - killedAt) / 1000).toFixed(1)} s after the kill`,
    );
  });
});
