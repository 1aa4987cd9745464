import { expect } from "chai";
import { startThrowawayPostgres, type ThrowawayPostgres } from "../../helpers/throwaway-postgres";
import type { ChildApp } from "../child-app";
import { post, report, startReplicas, stopAll, TestSchemas, waitFor, type Answer } from "./replica-harness";

const IN_FLIGHT = 32;
const RESTART_AFTER = 600;

describe("replicas on PostgreSQL: the database restarts mid-burst", function () {
  this.timeout(90_000);
  let cluster: ThrowawayPostgres | undefined;
  let schemas: TestSchemas | undefined;
  let replicas: ChildApp[] = [];

  afterEach(async () => {
    await stopAll(replicas);
    replicas = [];
    await schemas?.drop();
    await cluster?.destroy();
    cluster = undefined;
  });

  it("answers 503 with Retry-After or 2xx; every 2xx is processed; 202 again within seconds after the restart", async () => {
    cluster = await startThrowawayPostgres();
    // The store lives on the throwaway server; the handler records on the shared one, which stays up.
    schemas = await TestSchemas.create(undefined, cluster.url);
    replicas = await startReplicas(2, () => schemas!.env({ MODE: "work", CONCURRENCY: "8", RETRY_ATTEMPTS: "100", RETRY_DELAY_MS: "100" }));

    const answers: Array<Answer & { at: number }> = [];
    let restarting: Promise<void> | undefined;
    let backAt = 0;
    let downAt = 0;
    let n = 0;
    // Senders go on until the database has been back for two seconds.
    await Promise.all(
      Array.from({ length: IN_FLIGHT }, async () => {
        while (backAt === 0 || Date.now() - backAt < 2000) {
          const i = n++;
          const answer = await post(replicas[i % replicas.length]!.base, { n: i }, { "x-request-id": `d${i}` });
          answers.push({ ...answer, at: Date.now() });
          if (answers.length === RESTART_AFTER) {
            restarting = (async () => {
              downAt = Date.now();
              await cluster!.stop("fast");
              await cluster!.start();
              backAt = Date.now();
            })();
          }
          if (answer.status === 503) await new Promise((r) => setTimeout(r, 20));
        }
      }),
    );
    await restarting;

    const statuses = new Map<number, number>();
    for (const a of answers) statuses.set(a.status, (statuses.get(a.status) ?? 0) + 1);
    const unexpected = answers.filter((a) => !(a.status >= 200 && a.status < 300) && a.status !== 503);
    expect(unexpected.map((a) => a.status), "answers other than 2xx and 503").to.deep.equal([]);
    const refused = answers.filter((a) => a.status === 503);
    expect(refused.length, "requests while the database was down were refused").to.be.greaterThan(0);
    expect(refused.filter((a) => !(Number(a.retryAfter) > 0)).length, "503 answers without Retry-After").to.equal(0);
    const firstOkAfter = answers.filter((a) => a.at >= backAt && a.status >= 200 && a.status < 300).map((a) => a.at);
    expect(firstOkAfter.length, "2xx answers after the database came back").to.be.greaterThan(0);
    const recovery = Math.min(...firstOkAfter) - backAt;
    expect(recovery, "ms from the database back to the next 2xx").to.be.below(5000);

    const accepted = answers.filter((a) => a.status >= 200 && a.status < 300).map((a) => a.id!);
    const processed = async () => {
      const rows = (await schemas!.sql(`SELECT DISTINCT event_id FROM "${schemas!.results}".runs`)) as Array<{ event_id: string }>;
      const done = new Set(rows.map((r) => r.event_id));
      return accepted.filter((id) => !done.has(id));
    };
    await waitFor(async () => (await processed()).length === 0, 30_000, async () => `accepted, not processed: ${(await processed()).slice(0, 5).join(", ")}`);
    report(
      `${answers.length} requests: ${[...statuses].map(([s, c]) => `${c} x ${s === 0 ? "connection error" : s}`).join(", ")}; ` +
        `database down and restarting for ${((backAt - downAt) / 1000).toFixed(1)} s; all ${accepted.length} accepted processed; first 2xx ${recovery} ms after the database was back`,
    );
  });
});
