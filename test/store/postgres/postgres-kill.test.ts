import { expect } from "chai";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { join } from "node:path";
import { message } from "../store-conformance";
import { until } from "../../helpers/wait";
import { PostgresFixture } from "./postgres-fixture";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("PostgresStore: a consumer killed with SIGKILL", function () {
  this.timeout(30_000);
  const fixture = new PostgresFixture();
  afterEach(() => fixture.cleanup());

  it("holds its messages while alive; once killed its leases expire and another process claims them, the attempt counted", async () => {
    const schema = fixture.schema();
    const survivor = fixture.store({ schema, leaseMs: 1_000 });
    await survivor.open();
    for (const id of ["m1", "m2", "m3"]) await survivor.enqueue("q", message(id));
    const child = spawn(process.execPath, [join(__dirname, "fixtures", "claim-and-hold.js")], {
      env: { ...process.env, PG_URL: fixture.url, PG_SCHEMA: schema, LEASE_MS: "1000", LIMIT: "2" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    await until(() => /CLAIMED/.test(out), 10_000);
    expect(out.trim()).to.equal("CLAIMED m1,m2");
    // Alive: its leases are renewed past their length, and the survivor only gets the rest.
    await sleep(2_000);
    expect(await survivor.reap()).to.equal(0);
    expect((await survivor.claim("q", 10)).map((m) => m.id)).to.deep.equal(["m3"]);
    child.kill("SIGKILL");
    await once(child, "exit");
    const killedAt = Date.now();
    const back: Array<{ id: string; attempts: number }> = [];
    await until(async () => {
      for (const m of await survivor.claim("q", 10)) back.push({ id: m.id, attempts: m.attempts });
      return back.length === 2;
    }, 5_000);
    expect(back).to.deep.equal([
      { id: "m1", attempts: 1 },
      { id: "m2", attempts: 1 },
    ]);
    // Within about a lease (1 s) and a reaper's round (0.5 s).
    expect(Date.now() - killedAt).to.be.lessThan(2_500);
  });
});
