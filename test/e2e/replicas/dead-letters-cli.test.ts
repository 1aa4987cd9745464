import { expect } from "chai";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { runCli } from "../../cli/cli-process";
import { CJS_HANDLERS } from "../../config/yaml-helpers";
import { post, report, replicaFixture, waitFor } from "./replica-harness";

const ATTEMPTS = 2;

interface ListedLetter {
  id: string;
  task: string;
  queue: string;
  attempts: number;
  error: string;
}

describe("replicas on PostgreSQL: dead letters managed from another process", function () {
  this.timeout(60_000);
  const fixture = replicaFixture("replica-dlq-");

  it("the CLI lists, shows, replays (to the running replicas) and purges what they dead-lettered", async () => {
    const { schemas, dir } = fixture;
    const replicas = await fixture.start(2, () => schemas.env({ MODE: "fail", RETRY_ATTEMPTS: String(ATTEMPTS), RETRY_DELAY_MS: "20" }));
    // The same app as the replicas, described in YAML for the CLI: its store is the URL with the schema.
    const worker = join(dir, "worker.yaml");
    writeFileSync(
      worker,
      [
        "app:",
        "  name: replicas",
        `  store: ${schemas.storeUrl}?schema=${schemas.store}`,
        "resources:",
        "  hook: {type: webhook, path: /in, port: 0}",
        "tasks:",
        "  - name: work",
        "    source: hook",
        `    retry: {attempts: ${ATTEMPTS}}`,
        `    handler: {ref: "${CJS_HANDLERS}:fail"}`,
        "",
      ].join("\n"),
    );
    const cli = async (...args: string[]) => {
      const result = await runCli(["dead-letters", ...args, worker]);
      expect(result.code, `dead-letters ${args.join(" ")}: ${result.stderr}`).to.equal(0);
      return result.stdout;
    };
    const listed = async () => JSON.parse(await cli("list", "--json")) as ListedLetter[];

    const requests = ["dl-0", "dl-1", "dl-2", "dl-3"];
    const ids: string[] = [];
    for (const [i, request] of requests.entries()) {
      const answer = await post(replicas[i % 2]!.base, { order: i }, { "x-request-id": request });
      expect(answer.status).to.equal(202);
      ids.push(answer.id!);
    }
    await waitFor(async () => (await schemas.count()) >= requests.length * ATTEMPTS, 20_000, async () => `${await schemas.count()} runs`);
    await waitFor(async () => (await listed()).length === requests.length, 10_000, async () => JSON.stringify(await listed()));

    const table = (await cli("list")).trim().split("\n");
    expect(table[0]).to.match(/^ID\s+TASK\s+QUEUE\s+ATTEMPTS\s+DIED AT\s+ERROR$/);
    expect(table.slice(1).map((l) => l.split(/\s+/)[0]).sort()).to.deep.equal([...ids].sort());
    for (const line of table.slice(1)) expect(line).to.match(new RegExp(`\\swork\\s+webhook:work\\s+${ATTEMPTS}\\s+\\S+\\s+always fails \\(attempt ${ATTEMPTS}\\)$`));

    const shown = await cli("show", ids[0]!);
    expect(shown).to.contain(`id:          ${ids[0]}`).and.contain('"order": 0');

    // A replay goes back to the queue; a running replica picks it up, its attempts start again.
    expect(await cli("replay", ids[0]!)).to.match(/^replayed 1 dead letter/);
    await waitFor(async () => (await schemas.count("event_id = $1", [ids[0]])) >= 2 * ATTEMPTS, 10_000, async () => `${await schemas.count("event_id = $1", [ids[0]])} runs of the replayed event`);
    await waitFor(async () => (await listed()).some((l) => l.id === ids[0]), 10_000, () => "the replayed event did not die again");
    const again = (await listed()).find((l) => l.id === ids[0])!;
    expect(again.attempts, "attempts were reset by the replay").to.equal(ATTEMPTS);
    const attemptsRun = (await schemas.sql(`SELECT attempt FROM "${schemas.results}".runs WHERE event_id = $1 ORDER BY started`, [ids[0]])) as Array<{ attempt: number }>;
    expect(attemptsRun.map((r) => r.attempt)).to.deep.equal([1, 2, 1, 2]);

    expect((await cli("purge", ids[1]!)).trim()).to.equal("purged 1 dead letter");
    expect((await cli("purge", "--all")).trim()).to.equal("purged 3 dead letters");
    expect((await cli("list")).trim()).to.equal("no dead letters");
    const missing = await runCli(["dead-letters", "show", ids[2]!, worker]);
    expect(missing.code).to.equal(1);
    report(`${requests.length} dead letters made by 2 replicas; listed, shown, replayed (run again by a replica, attempts 1-${ATTEMPTS}) and purged by the CLI`);
  });
});
