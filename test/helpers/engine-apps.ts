import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CoreApp, MemoryStore, silentLogger, type CoreAppOptions } from "../../src/index";
import type { PostgresStoreOptions } from "../../src/store/postgres/postgres-options";
import { PostgresFixture } from "../store/postgres/postgres-fixture";

export type Engine = "memory" | "embedded" | "postgres";
export const ENGINES: readonly Engine[] = ["memory", "embedded", "postgres"];

export interface EngineAppOptions extends CoreAppOptions {
  /** On PostgreSQL, options of the store (its schema is the test's). */
  readonly postgres?: Partial<PostgresStoreOptions>;
}

/**
 * Apps on each store engine, for the describe block it is called in. The apps one test makes
 * on an engine share its data, as replicas of one app would: one memory store, one data
 * directory, one PostgreSQL schema, all new for each test; every app is stopped after its test
 * and the data removed.
 */
export function useEngineApps(prefix: string, stopTimeoutMs = 2_000): (engine: Engine, name: string, options?: EngineAppOptions) => CoreApp {
  const postgres = new PostgresFixture();
  const apps: CoreApp[] = [];
  let dir: string | undefined;
  let schema: string | undefined;
  let memory: MemoryStore | undefined;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), `${prefix}-`));
    schema = undefined;
    memory = undefined;
  });
  afterEach(async () => {
    for (const app of apps.splice(0)) await app.stop({ timeoutMs: stopTimeoutMs });
    await postgres.cleanup();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });
  return (engine, name, { postgres: postgresOptions, ...options } = {}) => {
    const store: CoreAppOptions =
      engine === "memory"
        ? { store: (memory ??= new MemoryStore()) }
        : engine === "embedded"
          ? { store: "embedded", dataDir: join(dir!, "data") }
          : { store: postgres.store({ ...postgresOptions, schema: (schema ??= postgres.schema()) }) };
    const app = new CoreApp(name, { ...store, logger: silentLogger, ...options });
    apps.push(app);
    return app;
  };
}
