import { parseArgs } from "node:util";
import { appStatus, type AppStatus } from "../app/app-status";
import { openAppStore, storeTargetOfModule, storeTargetOfYaml } from "./app-store";
import type { Output } from "./output";
import { formatTable } from "./table";
import { UsageError } from "./usage";

/**
 * `status <worker.yaml | --module file.js> [--json]`: opens the app's store without consuming
 * (the app may be running), prints per queue its depth, oldest age, in flight and dead letters.
 */
export async function statusCommand(args: readonly string[], output: Output): Promise<number> {
  const { values, positionals } = parseArgs({ args: [...args], options: { module: { type: "string" }, json: { type: "boolean" } }, allowPositionals: true, strict: true });
  const expected = values.module === undefined ? 1 : 0;
  if (positionals.length !== expected) throw new UsageError("usage: status <worker.yaml | --module file.js> [--json]");
  const target = values.module === undefined ? await storeTargetOfYaml(positionals[0]) : await storeTargetOfModule(values.module);
  if (target.store === "memory") {
    throw new Error(`app "${target.appName}" uses the memory store: its queues live only inside the running process; read them there with app.status() or /metrics`);
  }
  const store = await openAppStore(target);
  let status: AppStatus;
  try {
    status = await appStatus(target.appName, target.tasks, store);
  } finally {
    await store.close();
  }
  if (values.json === true) output.out(JSON.stringify(status, null, 2));
  else for (const line of statusTable(status)) output.out(line);
  return 0;
}

export function statusTable(status: AppStatus): string[] {
  if (status.queues.length === 0) return [`app ${status.app}: no queues`];
  return formatTable(
    ["QUEUE", "DEPTH", "WAITING", "IN FLIGHT", "OLDEST", "DEAD LETTERS", "CONSUMER", "PRODUCERS"],
    status.queues.map((q) => [q.queue, String(q.depth), String(q.waiting), String(q.inFlight), age(q.oldestAgeSeconds), String(q.deadLetters), q.consumer ?? "-", q.producers.join(", ") || "-"]),
  );
}

/** "-" when empty, else seconds, minutes, hours or days, whichever reads best. */
function age(seconds: number): string {
  if (seconds <= 0) return "-";
  if (seconds < 120) return `${seconds.toFixed(1)}s`;
  if (seconds < 7_200) return `${(seconds / 60).toFixed(1)}m`;
  if (seconds < 172_800) return `${(seconds / 3_600).toFixed(1)}h`;
  return `${(seconds / 86_400).toFixed(1)}d`;
}
