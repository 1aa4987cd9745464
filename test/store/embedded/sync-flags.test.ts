import { expect } from "chai";
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import * as lmdb from "lmdb";
import { openEnvironment } from "../../../src/store/embedded/lmdb-env";
import { StoreFixture } from "./store-fixture";

/** open(2) flags, as /proc/<pid>/fdinfo shows them (octal). */
const O_DSYNC = 0o10000;
/** LMDB environment flags (lmdb.h; lmdb-js's MDB_OVERLAPPINGSYNC). */
const MDB_OVERLAPPINGSYNC = 0x1000;
const MDB_NOSYNC = 0x10000;
const MDB_NOMETASYNC = 0x40000;
const MDB_WRITEMAP = 0x80000;
const MDB_MAPASYNC = 0x100000;

/** The open(2) flags of every descriptor of this process open on a file under `dir`. */
function openFlagsUnder(dir: string): Array<{ path: string; flags: number }> {
  const found: Array<{ path: string; flags: number }> = [];
  for (const fd of readdirSync("/proc/self/fd")) {
    let path: string;
    try {
      path = readlinkSync(`/proc/self/fd/${fd}`);
    } catch {
      continue; // closed since the listing
    }
    if (!path.startsWith(`${dir}/`)) continue;
    const line = /^flags:\s+([0-7]+)$/m.exec(readFileSync(`/proc/self/fdinfo/${fd}`, "utf8"));
    if (line) found.push({ path, flags: parseInt(line[1], 8) });
  }
  return found;
}

/**
 * A crash test cannot see a missing sync (the page cache survives a SIGKILL): these check the
 * flags the files were actually opened with, which are what durability.md promises.
 */
describe("embedded store: the files are opened with the sync settings the docs promise", () => {
  const fixture = new StoreFixture("sync-flags-");
  afterEach(() => fixture.cleanup());

  it("the journal's open segment is written through an O_DSYNC descriptor", async () => {
    const dir = fixture.tempDir();
    const store = await fixture.openStore({ dir });
    await store.enqueue("q", { id: "a", payload: { n: 1 }, attempts: 0, enqueuedAt: Date.now() });
    const segments = openFlagsUnder(join(dir, "journal"));
    expect(segments, "an open journal segment").to.have.length.greaterThan(0);
    for (const { path, flags } of segments) expect(flags & O_DSYNC, `${path} flags ${flags.toString(8)}`).to.equal(O_DSYNC);
  });

  it("LMDB runs with overlapping sync and none of noSync, noMetaSync, mapAsync or writeMap; its meta page is written O_DSYNC", async () => {
    const dir = join(fixture.tempDir(), "env");
    const dbs = openEnvironment(dir);
    try {
      await dbs.meta.put("probe", 1);
      const env = (dbs.root as unknown as { env: { address: number } }).env;
      // lmdb exports its native binding (untyped): getEnvFlags reads mdb_env_get_flags of the open environment.
      const native = (lmdb as unknown as { nativeAddon: { getEnvFlags(address: number): number } }).nativeAddon;
      const flags = native.getEnvFlags(env.address);
      expect(flags & MDB_OVERLAPPINGSYNC, "overlapping sync (fdatasync before the write resolves)").to.equal(MDB_OVERLAPPINGSYNC);
      expect(flags & (MDB_NOSYNC | MDB_NOMETASYNC | MDB_MAPASYNC | MDB_WRITEMAP), `env flags 0x${flags.toString(16)}`).to.equal(0);
      const dataFile = openFlagsUnder(dir).filter(({ path }) => path.endsWith("/data.mdb"));
      expect(dataFile.some(({ flags }) => (flags & O_DSYNC) === O_DSYNC), "an O_DSYNC descriptor on data.mdb").to.equal(true);
    } finally {
      await dbs.root.close();
    }
  });
});
