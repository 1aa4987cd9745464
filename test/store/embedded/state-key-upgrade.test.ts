import { expect } from "chai";
import { join } from "node:path";
import { openEnvironment } from "../../../src/store/embedded/lmdb-env";
import { stateRecord } from "../../../src/store/embedded/records";
import { StoreFixture } from "./store-fixture";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Writes state entries as builds before the hashing of such keys did: under the key itself,
 * with an index key in `expiry` for a time-to-live.
 */
async function writeAsBefore(dir: string, namespace: string, entries: ReadonlyArray<{ key: string; value: unknown; expiresAt?: number }>): Promise<void> {
  const dbs = openEnvironment(dir);
  try {
    await dbs.root.transaction(() => {
      for (const { key, value, expiresAt } of entries) {
        void dbs.state.put([namespace, key], stateRecord(value, expiresAt));
        if (expiresAt !== undefined) void dbs.expiry.put([expiresAt, namespace, key], true);
      }
    });
  } finally {
    await dbs.root.close();
  }
}

describe("EmbeddedStore: state keys an earlier version wrote as they are", function () {
  this.timeout(30_000);
  const fixture = new StoreFixture("state-key-upgrade-");
  afterEach(() => fixture.cleanup());

  // lmdb escapes U+0000-U+0004 only in strings under 64 characters; such keys are hashed now.
  it("reads them, refuses their repeat, sweeps them when expired, and leaves no unreadable index key", async () => {
    const dir = join(fixture.tempDir(), "data");
    const long = (tag: string) => `${"d".repeat(70)}\u0001${tag}`;
    const now = Date.now();
    await writeAsBefore(dir, "dedupe:hooks", [
      { key: long("marker"), value: "event-1", expiresAt: now + 3_600_000 },
      { key: long("plain"), value: { kept: true } },
      ...[0, 1, 2].map((i) => ({ key: long(`gone${i}`), value: i, expiresAt: now + 50 })),
      { key: "short", value: "as ever", expiresAt: now + 3_600_000 },
    ]);
    const store = await fixture.openStore({ dir });
    const state = store.state("dedupe:hooks");
    expect(await state.get(long("marker"))).to.equal("event-1");
    expect(await state.get(long("plain"))).to.deep.equal({ kept: true });
    expect(await state.setIfAbsent(long("marker"), "event-2", { ttlMs: 60_000 }), "the marker still refuses its repeat").to.equal(false);
    expect(await state.get("short")).to.equal("as ever");
    await sleep(80);
    expect(await store.sweepExpired()).to.equal(3);
    expect(await state.get(long("gone1"))).to.equal(undefined);
    expect(await state.delete(long("plain"))).to.equal(true);
    expect(await state.get(long("plain"))).to.equal(undefined);
    await fixture.closeStore(store);

    const dbs = openEnvironment(dir);
    try {
      const shapes = [...dbs.expiry.getKeys()].map((key) => (key as unknown[]).length);
      expect(shapes, "index keys: the marker's and the short one's, each [expiresAt, namespace, key]").to.deep.equal([3, 3]);
      expect([...dbs.state.getKeys()].every((key) => (key as unknown[]).length === 2)).to.equal(true);
    } finally {
      await dbs.root.close();
    }
  });
});
