import { chmodSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { expect } from "chai";
import { PostgresStore } from "../../../src/store/postgres/postgres-store";
import { fillDisk, mountLoopDisk, type LoopDisk } from "../../helpers/loop-disk";
import { startThrowawayPostgres, type ThrowawayPostgres } from "../../helpers/throwaway-postgres";
import { recordingLogger, until, type LogLine } from "../../helpers/wait";
import { message } from "../store-conformance";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("PostgresStore when its database's disk fills", function () {
  this.timeout(90_000);
  let disk: LoopDisk | undefined;
  let cluster: ThrowawayPostgres | undefined;
  let store: PostgresStore | undefined;
  before(async function () {
    const mounted = mountLoopDisk(300);
    if ("unavailable" in mounted) return this.skip();
    disk = mounted;
    // The server runs as the postgres user: it must reach its directory on the mounted disk.
    chmodSync(dirname(disk.dir), 0o755);
    chmodSync(disk.dir, 0o755);
    // WAL preallocated and bounded: the tables' files fill the disk, not a WAL segment the server cannot make.
    cluster = await startThrowawayPostgres({ parentDir: disk.dir, settings: { max_wal_size: "64MB", min_wal_size: "32MB" } });
  });
  after(async () => {
    await store?.close();
    await cluster?.destroy();
    disk?.unmount();
  });

  it("stays failing while writes fail for want of room though its reads pass, logs a few lines, and takes work again once there is room", async () => {
    const lines: LogLine[] = [];
    store = new PostgresStore({ connectionString: cluster!.url, schema: "disk_full", logger: recordingLogger(lines), statementTimeoutMs: 2_000, connectionTimeoutMs: 1_000, probeIntervalMs: 200 });
    await store.open();
    const big = "x".repeat(8_000);
    const filler = join(disk!.dir, "filler");
    fillDisk(filler);
    // Writes keep failing (no room for a new page) while the reads the store tries succeed.
    let n = 0;
    let failed = 0;
    // Once failing, it stays so: a read that passes does not make it take work it cannot write.
    let upAgain = 0;
    const sampler = setInterval(() => {
      if (failed > 0 && store!.failure === undefined) upAgain++;
    }, 10);
    const until3s = Date.now() + 3_000;
    try {
      while (Date.now() < until3s) {
        await store.enqueue("q", message(`m${n++}`, { big })).catch(() => failed++);
        await sleep(50);
      }
    } finally {
      clearInterval(sampler);
    }
    expect(failed).to.be.greaterThan(10);
    expect(upAgain).to.equal(0);
    const database = lines.filter((l) => l.fields?.kind === "database");
    expect(database.length, JSON.stringify(database.map((l) => l.msg))).to.be.within(1, 2);

    rmSync(filler);
    await until(async () => (await store!.enqueue("q", message(`after-${n}`, { big })).then(() => true, () => false)), 10_000);
    await until(() => store!.failure === undefined, 5_000);
  });
});
