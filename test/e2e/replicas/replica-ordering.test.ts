import { expect } from "chai";
import { post, report, replicaFixture, waitFor, type RunRow } from "./replica-harness";

const KEYS = 50;
const PER_KEY = 40;

describe("replicas on PostgreSQL: ordering keys", function () {
  this.timeout(60_000);
  const fixture = replicaFixture("replica-ordering-");

  it("runs the events of one key one at a time, in the order they were accepted, whichever replica took them", async () => {
    const { schemas } = fixture;
    const replicas = await fixture.start(3, () => schemas.env({ MODE: "ordering", CONCURRENCY: "16" }));
    // One sender per key sends its events in sequence (each after the last was accepted), each
    // to the next replica: the keys interleave, and the acceptance order of a key is its seq.
    await Promise.all(
      Array.from({ length: KEYS }, async (_, k) => {
        for (let seq = 0; seq < PER_KEY; seq++) {
          const target = replicas[(k + seq) % replicas.length]!;
          const answer = await post(target.base, { key: `k${k}`, seq });
          if (answer.status !== 202) throw new Error(`k${k}#${seq} answered ${answer.status}`);
        }
      }),
    );
    const total = KEYS * PER_KEY;
    await waitFor(async () => (await schemas.count()) >= total, 40_000, async () => `${await schemas.count()} of ${total} runs`);
    const byKey = new Map<string, RunRow[]>();
    for (const run of await schemas.runs()) byKey.set(run.key!, [...(byKey.get(run.key!) ?? []), run]);
    let overlaps = 0;
    const outOfOrder: string[] = [];
    const replicasPerKey: number[] = [];
    for (const [key, runs] of byKey) {
      runs.sort((a, b) => a.started - b.started);
      if (runs.map((r) => r.seq).join(",") !== Array.from({ length: PER_KEY }, (_, i) => i).join(",")) outOfOrder.push(`${key}: ${runs.map((r) => r.seq).join(",")}`);
      for (let i = 1; i < runs.length; i++) if (runs[i]!.started < runs[i - 1]!.ended) overlaps++;
      replicasPerKey.push(new Set(runs.map((r) => r.replica)).size);
    }
    expect(byKey.size).to.equal(KEYS);
    expect(outOfOrder, "keys processed out of acceptance order").to.deep.equal([]);
    expect(overlaps, "two events of one key running at once").to.equal(0);
    expect(Math.max(...replicasPerKey), "the events of a key were run by several replicas").to.be.greaterThan(1);
    report(`${KEYS} keys x ${PER_KEY} events over 3 replicas: in order, no overlap; replicas per key ${Math.min(...replicasPerKey)}-${Math.max(...replicasPerKey)}`);
  });
});
