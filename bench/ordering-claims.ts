import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EmbeddedStore } from "../src/store/embedded/embedded-store";
import { MemoryStore } from "../src/store/memory/memory-store";
import type { QueuedMessage, Store } from "../src/store/store";

/**
 * `node dist/bench/ordering-claims.js`: what ordering keys cost a store. For each engine and
 * key layout, ORDERING_BENCH_MESSAGES messages (default 20,000, 300-byte bodies) are enqueued
 * (64 at a time, as concurrent webhooks would be), then drained the way a task runner with
 * concurrency 16 drains them: claim up to 16, complete them all, again. Prints messages per
 * second for both phases, the median of ORDERING_BENCH_ROUNDS (default 3). ORDERING_BENCH_DIR: where the embedded store writes (default: the
 * system's temp directory; keep it on a real disk).
 */
const log = (line: string) => process.stdout.write(`${line}\n`);
const N = Number(process.env.ORDERING_BENCH_MESSAGES ?? 20_000);
const ROUNDS = Number(process.env.ORDERING_BENCH_ROUNDS ?? 3);
const CONCURRENCY = 16;
const BODY = Buffer.alloc(300, 0x61);

interface Layout {
  readonly name: string;
  /** The key of message i, or undefined. */
  key(i: number): string | undefined;
  /** Fewer messages for layouts that run one at a time. */
  readonly share: number;
}

const LAYOUTS: Layout[] = [
  { name: "no key", key: () => undefined, share: 1 },
  { name: "unique keys", key: (i) => `obj_${i}`, share: 1 },
  { name: "1,000 keys", key: (i) => `obj_${i % 1000}`, share: 1 },
  { name: "20 keys", key: (i) => `obj_${i % 20}`, share: 1 },
  { name: "1 key", key: () => "obj_0", share: 0.1 },
];

/** "embedded, journal off": every message in the B-tree, the path keyed messages take; for comparison. */
const ENGINES = ["memory", "embedded", "embedded, journal off"] as const;

function message(i: number, key: string | undefined): QueuedMessage {
  const m: QueuedMessage = { id: `m${i}`, payload: { n: i }, raw: BODY, attempts: 0, enqueuedAt: Date.now() };
  return key === undefined ? m : { ...m, orderingKey: key };
}

async function measure(store: Store, layout: Layout): Promise<{ count: number; enqueuePerSec: number; drainPerSec: number }> {
  const count = Math.max(1, Math.floor(N * layout.share));
  let started = performance.now();
  for (let i = 0; i < count; i += 64) {
    const batch: Promise<void>[] = [];
    for (let j = i; j < Math.min(count, i + 64); j++) batch.push(store.enqueue("q", message(j, layout.key(j))));
    await Promise.all(batch);
  }
  const enqueueMs = performance.now() - started;
  started = performance.now();
  let done = 0;
  while (done < count) {
    const got = await store.claim("q", CONCURRENCY);
    if (got.length === 0) throw new Error(`nothing claimable with ${count - done} messages left`);
    await Promise.all(got.map((m) => store.complete("q", m.id)));
    done += got.length;
  }
  const drainMs = performance.now() - started;
  return { count, enqueuePerSec: (count / enqueueMs) * 1000, drainPerSec: (count / drainMs) * 1000 };
}

async function main(): Promise<void> {
  const base = process.env.ORDERING_BENCH_DIR ?? tmpdir();
  // Unreported warm-up, so the first row is not the one that pays for the JIT.
  const warm = new MemoryStore({ maxQueued: 10_000_000 });
  await warm.open();
  for (const layout of LAYOUTS) await measure(warm, layout);
  await warm.close();
  // Rounds interleave the cases, so that other work on the machine touches them alike.
  const results = new Map<string, Array<{ count: number; enqueuePerSec: number; drainPerSec: number }>>();
  for (let round = 0; round < ROUNDS; round++) {
    for (const engine of ENGINES) {
      for (const layout of engine === "embedded, journal off" ? LAYOUTS.slice(0, 1) : LAYOUTS) {
        const dir = mkdtempSync(join(base, "ordering-bench-"));
        const store: Store =
          engine === "memory" ? new MemoryStore({ maxQueued: 10_000_000 }) : new EmbeddedStore({ dir, journal: engine === "embedded" ? undefined : false });
        await store.open();
        try {
          const id = `${engine}|${layout.name}`;
          results.set(id, [...(results.get(id) ?? []), await measure(store, layout)]);
        } finally {
          await store.close();
          rmSync(dir, { recursive: true, force: true });
        }
      }
    }
  }
  log(`Median of ${ROUNDS} rounds:`);
  log("");
  log(`| engine | keys | messages | enqueue msg/s | claim+complete msg/s |`);
  log(`|---|---|---:|---:|---:|`);
  for (const [id, runs] of results) {
    const [engine, keys] = id.split("|");
    const enqueue = median(runs.map((r) => r.enqueuePerSec));
    const drain = median(runs.map((r) => r.drainPerSec));
    log(`| ${engine} | ${keys} | ${runs[0]!.count.toLocaleString("en")} | ${Math.round(enqueue).toLocaleString("en")} | ${Math.round(drain).toLocaleString("en")} |`);
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
