/**
 * CPU per request of the embedded store's history alone, without HTTP, queues or tasks: the
 * notes of the bench's main case (a 312-byte webhook whose task emits to a second task: two
 * events and two runs per request) fed at RATE requests a second for SECONDS, counted with
 * process.cpuUsage (every thread: lmdb's writer and the GC's helpers too), on the main thread
 * and on the others. Less noisy than the whole server on a busy machine. Run:
 * `npm run build && node dist/bench/history-cpu-embedded.js` (RATE, SECONDS, DIR).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { EmbeddedHistory } from "../src/store/embedded/history/embedded-history";
import { silentLogger } from "../src/util/logger";
import { emittedId } from "../src/app/task-runner";
import { newEventId } from "../src/util/event-id";
import { jsonBody, SMALL_BODY_BYTES } from "./payload";
import { REPO_ROOT } from "./settings";

const RATE = Number(process.env.RATE ?? 9_000);
const SECONDS = Number(process.env.SECONDS ?? 6);
const TICK_MS = 10;

/** Clock ticks of CPU of this process's main thread and of its other threads (Linux). */
function threadTicks(): { main: number; other: number } {
  let main = 0;
  let other = 0;
  for (const tid of readdirSync("/proc/self/task")) {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ticks = Number(fields[11]) + Number(fields[12]);
    if (Number(tid) === process.pid) main += ticks;
    else other += ticks;
  }
  return { main, other };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(process.env.DIR ?? join(REPO_ROOT, "bench", "results"), "history-cpu-"));
  let open = true;
  const history = new EmbeddedHistory({ dir, logger: silentLogger, isOpen: () => open, requireOpen: () => undefined });
  const text = jsonBody(SMALL_BODY_BYTES);
  const request = () => {
    const id = newEventId();
    const now = Date.now();
    const payload = { body: JSON.parse(text) as unknown, headers: { host: "127.0.0.1:41234", "content-type": "application/json", "content-length": String(SMALL_BODY_BYTES) }, query: {}, method: "POST", path: "/hook0", client: "127.0.0.1", received_at: now / 1000 };
    history.noteEvent({ id, origin: { kind: "webhook", source: "hook0" }, receivedAt: now, deliveries: [{ task: "hook0", queue: "webhook:hook0", messageId: id }], payload, raw: Buffer.from(text), bodyFromRaw: true });
    const child = emittedId(id, "hook0");
    history.noteRun({ eventId: id, run: { task: "hook0", attempt: 1, startedAt: now, durationMs: 0.123, outcome: "success", emitted: [child] }, status: "succeeded" });
    history.noteEvent({ id: child, origin: { kind: "queue", queue: "next0" }, receivedAt: now + 1, deliveries: [{ task: "next0", queue: "next0", messageId: child }], payload: { path: "/hook0", at: now / 1000 }, parentId: id });
    history.noteRun({ eventId: child, run: { task: "next0", attempt: 1, startedAt: now + 1, durationMs: 0.05, outcome: "success" }, status: "succeeded" });
  };
  let sent = 0;
  const feed = async (ms: number) => {
    const end = Date.now() + ms;
    while (Date.now() < end) {
      for (let i = 0; i < (RATE * TICK_MS) / 1000; i++) request();
      sent += (RATE * TICK_MS) / 1000;
      await new Promise((resolve) => setTimeout(resolve, TICK_MS));
    }
  };
  try {
    await feed(2_000); // warm-up: the environment opened, the code optimized
    await history.flush();
    const ticks = threadTicks();
    const cpu = process.cpuUsage();
    const from = sent;
    await feed(SECONDS * 1_000);
    await history.flush();
    const used = process.cpuUsage(cpu);
    const after = threadTicks();
    const n = sent - from;
    const size = await history.size();
    const us = (x: number) => (x / n).toFixed(1);
    const tickUs = 10_000; // USER_HZ is 100 on Linux
    console.log(
      `${n} requests in ${SECONDS} s: ${us(used.user + used.system)} µs of CPU per request (user ${us(used.user)}, system ${us(used.system)}; ` +
        `main thread ${us((after.main - ticks.main) * tickUs)}, other threads ${us((after.other - ticks.other) * tickUs)}); ${Math.round(size.bytes / size.events)} bytes per event`,
    );
  } finally {
    open = false;
    await history.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

void main();
