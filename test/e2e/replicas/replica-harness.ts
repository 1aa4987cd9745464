import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "pg";
import { startChild, type ChildApp } from "../child-app";

/** The shared test database (trust auth); each test works in schemas of its own. */
export const PG_URL = process.env.WEBHOOK_TASKS_TEST_PG ?? "postgres://postgres@127.0.0.1:5432/test";

const FIXTURE = join(__dirname, "..", "fixtures", "replica-app.js");

/** One row per handler run, written by the replicas (see fixtures/replica-app.ts). */
export interface RunRow {
  event_id: string;
  request: string | null;
  replica: string;
  key: string | null;
  seq: number | null;
  attempt: number;
  started: number;
  ended: number;
  first: boolean | null;
}

/** A store schema and a results schema (with its `runs` table) in one database, unique per test. */
export class TestSchemas {
  readonly store: string;
  readonly results: string;

  /** `url` holds the results; `storeUrl` the store (another server when the test breaks that one). */
  private constructor(
    readonly url: string,
    readonly storeUrl: string,
  ) {
    const tag = `rep_${Date.now().toString(36)}_${randomBytes(3).toString("hex")}`;
    this.store = tag;
    this.results = `${tag}_runs`;
  }

  static async create(url = PG_URL, storeUrl = url): Promise<TestSchemas> {
    const schemas = new TestSchemas(url, storeUrl);
    await schemas.sql(
      `CREATE SCHEMA "${schemas.results}";
       CREATE TABLE "${schemas.results}".runs (event_id text NOT NULL, request text, replica text NOT NULL, key text, seq int,
         attempt int NOT NULL, started double precision NOT NULL, ended double precision NOT NULL, first boolean)`,
    );
    return schemas;
  }

  /** Environment of a replica working in these schemas. */
  env(extra: Record<string, string> = {}): Record<string, string> {
    return { STORE_URL: this.storeUrl, STORE_SCHEMA: this.store, RESULTS_URL: this.url, RESULTS_SCHEMA: this.results, ...extra };
  }

  async runs(): Promise<RunRow[]> {
    return (await this.sql(`SELECT * FROM "${this.results}".runs ORDER BY started`)) as RunRow[];
  }

  async count(where = "true", params: unknown[] = []): Promise<number> {
    const [row] = (await this.sql(`SELECT count(*)::int AS n FROM "${this.results}".runs WHERE ${where}`, params)) as Array<{ n: number }>;
    return row!.n;
  }

  async drop(): Promise<void> {
    await this.sql(`DROP SCHEMA IF EXISTS "${this.results}" CASCADE`);
    await this.sql(`DROP SCHEMA IF EXISTS "${this.store}" CASCADE`, [], this.storeUrl).catch(() => undefined);
  }

  async sql(text: string, params: unknown[] = [], url = this.url): Promise<unknown[]> {
    const client = new Client({ connectionString: url });
    await client.connect();
    try {
      const result = await client.query(text, params);
      return (Array.isArray(result) ? result.at(-1)! : result).rows as unknown[];
    } finally {
      await client.end();
    }
  }
}

/** Starts `count` replicas of the fixture app on one store, each on its own port. */
export async function startReplicas(count: number, env: (index: number) => Record<string, string>): Promise<ChildApp[]> {
  return Promise.all(Array.from({ length: count }, (_, i) => startChild(FIXTURE, { REPLICA: `r${i}`, ...env(i) }, 30_000)));
}

export async function stopAll(replicas: readonly ChildApp[]): Promise<void> {
  await Promise.all(replicas.map((r) => r.kill("SIGKILL")));
}

/** What each test of a replica suite gets: its own schemas and temp dir, and replicas stopped after it. */
export interface ReplicaFixture {
  readonly schemas: TestSchemas;
  readonly dir: string;
  /** startReplicas, remembered so that they are killed after the test. */
  start(count: number, env: (index: number) => Record<string, string>): Promise<ChildApp[]>;
}

/** Registers the hooks of a replica suite (call inside `describe`). */
export function replicaFixture(dirPrefix: string): ReplicaFixture {
  let schemas: TestSchemas | undefined;
  let dir: string | undefined;
  let started: ChildApp[] = [];
  beforeEach(async () => {
    schemas = await TestSchemas.create();
    dir = mkdtempSync(join(tmpdir(), dirPrefix));
  });
  afterEach(async () => {
    await stopAll(started);
    started = [];
    await schemas?.drop();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });
  return {
    get schemas() {
      return schemas!;
    },
    get dir() {
      return dir!;
    },
    async start(count, env) {
      const replicas = await startReplicas(count, env);
      started.push(...replicas);
      return replicas;
    },
  };
}

export interface Answer {
  /** HTTP status, or 0 when the connection failed. */
  status: number;
  /** The event id of a 2xx answer. */
  id?: string;
  duplicate?: boolean;
  retryAfter?: string | null;
}

/** POSTs a JSON body to a replica's /in with real HTTP (fetch); never rejects. */
export async function post(base: string, body: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  try {
    const res = await fetch(`${base}/in`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
    const text = await res.text();
    if (res.status >= 200 && res.status < 300) {
      const json = JSON.parse(text) as { id: string; duplicate?: boolean };
      return { status: res.status, id: json.id, duplicate: json.duplicate === true };
    }
    return { status: res.status, retryAfter: res.headers.get("retry-after") };
  } catch {
    return { status: 0 };
  }
}

/** Runs `work` for every item, at most `inFlight` at once. */
export async function pool<T>(items: readonly T[], inFlight: number, work: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(inFlight, items.length) }, async () => {
      for (let i = next++; i < items.length; i = next++) await work(items[i]!, i);
    }),
  );
}

/** Polls until `check` returns true; throws with `describe()` after `ms`. */
export async function waitFor(check: () => Promise<boolean>, ms: number, describe: () => Promise<string> | string): Promise<void> {
  const end = Date.now() + ms;
  for (;;) {
    if (await check()) return;
    if (Date.now() > end) throw new Error(`not reached within ${ms} ms: ${await describe()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Messages waiting or claimed in the task's queue, as a replica sees the shared store. */
export async function depth(replica: ChildApp): Promise<number> {
  const res = await fetch(`${replica.base}/depth`);
  return ((await res.json()) as { depth: number }).depth;
}

/** The requests among `ids` whose processed-marker is set in the shared store. */
export async function markers(replica: ChildApp, ids: readonly string[]): Promise<Set<string>> {
  const res = await fetch(`${replica.base}/markers`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(ids) });
  return new Set((await res.json()) as string[]);
}

/** Writes a line to the test output (the figures a run measured). */
export function report(line: string): void {
  process.stdout.write(`      ${line}\n`);
}
