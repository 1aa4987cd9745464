import { parseCommandArgs } from "./command-args";
import { APP_OPTIONS, APP_USAGE, appRefOf, targetOf } from "./app-argument";
import { openAppStore, storeLocation } from "./app-store";
import type { Output } from "./output";
import { statusReport, type StatusReport } from "./status-report";
import { formatTable } from "./table";
import { UsageError } from "./usage";

/** Printed under the table when the store was named alone: no app says who consumes what. */
export const CONSUMER_UNKNOWN = "CONSUMER ?: unknown with --store (no app is read); give the app (worker.yaml or --module) to see the tasks";

/**
 * With --store, queues are found by what they hold: neither engine keeps a list of queues, so an
 * idle store's empty queues cannot be named (the app's own are listed when the app is given).
 */
export const STORE_EMPTY = "no queue holds a message or a dead letter: the store lists only those; give the app (worker.yaml or --module) to see its empty queues too";

/**
 * `status <app> [--json]`: opens the store without consuming (the app may be running), prints
 * per queue its depth, oldest age, in flight and dead letters, and, when the app is known,
 * the task consuming it and those feeding it.
 */
export async function statusCommand(args: readonly string[], output: Output): Promise<number> {
  const { values, positionals } = parseCommandArgs("status", args, { ...APP_OPTIONS, json: { type: "boolean" } });
  const parsed = appRefOf(values, positionals, 0);
  if (parsed === undefined) throw new UsageError(`usage: status ${APP_USAGE} [--json]`);
  const target = await targetOf(parsed.app);
  if (target.store === "memory") {
    throw new Error(`${target.label} uses the memory store: its queues live only inside the running process; read them there with app.status() or /metrics`);
  }
  const store = await openAppStore(target);
  let report: StatusReport;
  try {
    report = await statusReport(target.appName, target.tasks, store, storeLocation(target));
  } finally {
    await store.close();
  }
  if (values.json === true) output.out(JSON.stringify(report, null, 2));
  else for (const line of statusTable(report)) output.out(line);
  return 0;
}

export function statusTable(report: StatusReport): string[] {
  // A paused task's queue only grows: say why, or the table reads as a stuck app.
  const paused = report.paused.length === 0 ? [] : [`paused: ${report.paused.join(", ")} (events are stored, none runs until resumed: app.resume(task) or the console)`];
  return [...queueTable(report), ...paused];
}

function queueTable(report: StatusReport): string[] {
  const known = report.tasks !== null;
  if (report.queues.length === 0) return [known ? `app ${report.app}: no queues` : `${STORE_EMPTY} (${report.store.location})`];
  // Shown when some message waits for its time or for a limit: the usual table stays as it was.
  const flow = report.queues.some((q) => q.delayed > 0 || q.limited > 0);
  const grouped = report.queues.some((q) => q.collecting > 0);
  const lines = formatTable(
    ["QUEUE", "DEPTH", "WAITING", "IN FLIGHT", "OLDEST", "DEAD LETTERS", ...(flow ? ["DELAYED", "LIMITED"] : []), ...(grouped ? ["COLLECTING"] : []), "CONSUMER", "PRODUCERS"],
    report.queues.map((q) => [
      q.queue,
      String(q.depth),
      String(q.waiting),
      String(q.inFlight),
      age(q.oldestAgeSeconds),
      String(q.deadLetters),
      ...(flow ? [String(q.delayed), String(q.limited)] : []),
      ...(grouped ? [String(q.collecting)] : []),
      known ? (q.consumer ?? "-") : "?",
      known ? q.producers?.join(", ") || "-" : "?",
    ]),
  );
  return known ? lines : [...lines, CONSUMER_UNKNOWN];
}

/** "-" when empty, else seconds, minutes, hours or days, whichever reads best. */
function age(seconds: number): string {
  if (seconds <= 0) return "-";
  if (seconds < 120) return `${seconds.toFixed(1)}s`;
  if (seconds < 7_200) return `${(seconds / 60).toFixed(1)}m`;
  if (seconds < 172_800) return `${(seconds / 3_600).toFixed(1)}h`;
  return `${(seconds / 86_400).toFixed(1)}d`;
}
