import { expect } from "chai";
import pg from "pg";
import { startThrowawayPostgres, type ThrowawayPostgres } from "../../helpers/throwaway-postgres";

async function select1(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000, query_timeout: 1_000 });
  client.on("error", () => undefined);
  try {
    await client.connect();
    return (await client.query<{ one: number }>("SELECT 1 AS one")).rows[0].one;
  } finally {
    await client.end().catch(() => undefined);
  }
}

describe("throwaway PostgreSQL (test helper)", function () {
  this.timeout(60_000);
  let cluster: ThrowawayPostgres | undefined;
  afterEach(async () => {
    await cluster?.destroy();
    cluster = undefined;
  });

  it("starts, stops, starts again, freezes and thaws a cluster of its own", async () => {
    cluster = await startThrowawayPostgres();
    expect(await select1(cluster.url)).to.equal(1);
    await cluster.stop();
    const down = await select1(cluster.url).then(
      () => "answered",
      (error: Error) => error.message,
    );
    expect(down).to.match(/ECONNREFUSED|connect/);
    await cluster.start();
    expect(await select1(cluster.url)).to.equal(1);
    cluster.freeze();
    const frozen = await select1(cluster.url).then(
      () => "answered",
      (error: Error) => error.message,
    );
    expect(frozen).to.match(/timeout/i);
    cluster.thaw();
    expect(await select1(cluster.url)).to.equal(1);
  });
});
