import { expect } from "chai";
import { depth, pool, post, report, replicaFixture, waitFor, type Answer } from "./replica-harness";

const IDS = 100;

describe("replicas on PostgreSQL: one delivery id sent to every replica at once", function () {
  this.timeout(60_000);
  const fixture = replicaFixture("replica-dedupe-");

  it("is stored and processed once per delivery id; the other copies are answered as duplicates of it", async () => {
    const { schemas } = fixture;
    const replicas = await fixture.start(3, () => schemas.env({ MODE: "dedupe", CONCURRENCY: "8" }));
    const ids = Array.from({ length: IDS }, (_, i) => `delivery-${i}`);
    const answers = new Map<string, Answer[]>();
    await pool(ids, 8, async (id) => {
      // The same delivery reaches all three replicas at the same moment (a sender's retries
      // racing, or a broadcast through several load balancer paths).
      answers.set(id, await Promise.all(replicas.map((r) => post(r.base, { delivery: id }, { "x-delivery-id": id }))));
    });
    for (const [id, copies] of answers) {
      expect(copies.map((a) => a.status).filter((s) => s < 200 || s > 299), `answers to ${id}`).to.deep.equal([]);
      // Every copy names the one event stored for the delivery.
      expect(new Set(copies.map((a) => a.id)).size, `event ids answered for ${id}`).to.equal(1);
    }
    await waitFor(async () => (await schemas.count()) >= IDS && (await depth(replicas[0]!)) === 0, 20_000, async () => `${await schemas.count()} runs`);
    await new Promise((r) => setTimeout(r, 500)); // a late second event would show up by now
    const runs = await schemas.runs();
    const perDelivery = new Map<string, number>();
    for (const run of runs) perDelivery.set(run.request!, (perDelivery.get(run.request!) ?? 0) + 1);
    expect(ids.filter((id) => perDelivery.get(id) !== 1), "delivery ids processed other than once").to.deep.equal([]);
    expect(runs.length).to.equal(IDS);
    const duplicates = [...answers.values()].flat().filter((a) => a.duplicate).length;
    report(`${IDS} delivery ids x 3 replicas: ${runs.length} events processed, ${duplicates} copies answered as duplicates`);
  });
});
