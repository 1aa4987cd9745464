import { expect } from "chai";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { CoreApp } from "../../src/app/core-app";
import { createStore, DATA_DIR_ENV, defaultDataDir } from "../../src/store/create-store";
import { EmbeddedStore } from "../../src/store/embedded/embedded-store";
import { MemoryStore } from "../../src/store/memory/memory-store";
import type { Store } from "../../src/store/store";

describe("createStore", () => {
  let dir: string;
  let store: Store | undefined;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), "create-store-"))));
  afterEach(async () => {
    await store?.close();
    store = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  it("builds a memory store with the queue limit", async () => {
    store = createStore("memory", { appName: "a", maxQueued: 1 });
    expect(store).to.be.instanceOf(MemoryStore);
    await store.open();
    await store.enqueue("q", { id: "m1", payload: 1, attempts: 0, enqueuedAt: 0 });
    expect(store.admit("q")).to.include({ code: "queue_full" });
  });

  it("builds the embedded store in the given directory, with its limits", async () => {
    const dataDir = join(dir, "orders-data");
    store = createStore("embedded", { appName: "orders", dataDir, maxQueued: 1 });
    expect(store).to.be.instanceOf(EmbeddedStore);
    expect(store.durable).to.equal(true);
    await store.open();
    expect(existsSync(join(dataDir, "data.mdb"))).to.equal(true);
    await store.enqueue("q", { id: "m1", payload: 1, attempts: 0, enqueuedAt: 0 });
    expect(store.admit("q")).to.include({ code: "queue_full" });
  });

  it("puts the embedded store in $WEBHOOK_TASKS_DATA_DIR when the app names no directory", async () => {
    const saved = process.env[DATA_DIR_ENV];
    process.env[DATA_DIR_ENV] = join(dir, "from-env");
    try {
      store = createStore("embedded", { appName: "orders" });
      await store.open();
      expect(existsSync(join(dir, "from-env", "data.mdb"))).to.equal(true);
    } finally {
      if (saved === undefined) delete process.env[DATA_DIR_ENV];
      else process.env[DATA_DIR_ENV] = saved;
    }
  });

  it("defaults to .data/<app name> under the working directory", () => {
    expect(defaultDataDir("orders", {}, "/srv/app")).to.equal(resolve("/srv/app", ".data", "orders"));
    expect(defaultDataDir("orders", { [DATA_DIR_ENV]: "" }, "/srv/app")).to.equal(resolve("/srv/app", ".data", "orders"));
    expect(defaultDataDir("orders", { [DATA_DIR_ENV]: "/var/lib/hooks" }, "/srv/app")).to.equal("/var/lib/hooks");
    expect(defaultDataDir("orders", { [DATA_DIR_ENV]: "rel" }, "/srv/app")).to.equal(resolve("/srv/app", "rel"));
  });

  it("uses a given store as it is, and refuses an unknown engine name", () => {
    const given = new MemoryStore();
    expect(createStore(given, { appName: "a" })).to.equal(given);
    expect(() => createStore("redis" as "memory", { appName: "a" })).to.throw(TypeError, /unknown store/);
  });

  it("takes a string read from the environment without a cast, and refuses one that names no store when the app is built", () => {
    const fromEnvironment: string | undefined = process.env.WEBHOOK_TASKS_TEST_UNSET_STORE;
    expect(createStore(fromEnvironment ?? "memory", { appName: "a" })).to.be.instanceOf(MemoryStore);
    expect(() => new CoreApp("env-store", { store: fromEnvironment ?? "memory" })).not.to.throw();
    const misspelt: string = "embeded";
    expect(() => new CoreApp("env-store", { store: misspelt })).to.throw(TypeError, 'unknown store "embeded" (did you mean "embedded"?): use "memory", "embedded", a postgres:// URL or a Store instance');
    // A URL of another scheme is not printed past its scheme: it may hold a password.
    const wrongScheme: string = "postgress://orders:hunter2@db.internal/hooks";
    let message = "";
    try {
      new CoreApp("env-store", { store: wrongScheme });
    } catch (error) {
      message = String(error);
    }
    expect(message).to.include('unknown store "postgress://…" (the rest not shown: it may hold a password)').and.not.include("hunter2");
    // Nor are options given where a store goes.
    const options = { connectionString: "postgres://orders:hunter2@db.internal/hooks" } as unknown as Store;
    expect(() => new CoreApp("env-store", { store: options })).to.throw(TypeError, "unknown store (an object that is not a Store");
    expect(() => new CoreApp("env-store", { store: options })).to.not.throw(/hunter2/);
  });
});
