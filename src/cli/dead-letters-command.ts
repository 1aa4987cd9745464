import type { DeadLetter, Store } from "../store/store";
import { APP_OPTIONS, APP_USAGE, appRefOf, targetOf, type AppRef } from "./app-argument";
import { openAppStore, type TaskQueues } from "./app-store";
import { queueHint } from "./name-hints";
import type { Output } from "./output";
import { redactSecretHeaders } from "../util/redact-headers";
import { clip, formatTable } from "./table";
import { UsageError } from "./usage";
import { didYouMean } from "../util/did-you-mean";
import { parseCommandArgs } from "./command-args";
import { printableReplacer } from "./printable-json";
import { visible } from "./visible-text";

type Action = "list" | "show" | "replay" | "purge";
const ACTIONS: readonly Action[] = ["list", "show", "replay", "purge"];

/** A parsed `dead-letters` command line. */
export interface DeadLetterRequest {
  readonly action: Action;
  /** The dead letter's id (show, and replay/purge without --all). */
  readonly id: string | undefined;
  readonly all: boolean;
  readonly queue: string | undefined;
  readonly json: boolean;
  /** The worker YAML file, the compiled module given with --module, or the store given with --store. */
  readonly app: AppRef;
}

/**
 * `dead-letters list|show <id>|replay <id|--all>|purge <id|--all> <worker.yaml | --module file.js | --store url|dir>`:
 * opens only the store, does the one thing, closes it.
 */
export async function deadLettersCommand(args: readonly string[], output: Output): Promise<number> {
  const request = parseDeadLetterArgs(args);
  const target = await targetOf(request.app);
  const store = await openAppStore(target);
  try {
    return await operate(store, request, output, target.tasks);
  } finally {
    await store.close();
  }
}

export function parseDeadLetterArgs(args: readonly string[]): DeadLetterRequest {
  const { values, positionals } = parseCommandArgs("dead-letters", args, {
    ...APP_OPTIONS,
    all: { type: "boolean" },
    queue: { type: "string" },
    json: { type: "boolean" },
  });
  const [action, ...rest] = positionals;
  if (action === undefined) throw new UsageError(`dead-letters needs an action: ${ACTIONS.join(", ")}`);
  if (!ACTIONS.includes(action as Action)) {
    const guess = didYouMean(action, ACTIONS);
    throw new UsageError(`unknown dead-letters action "${action}"${guess ? ` (did you mean "${guess}"?)` : ""}; one of: ${ACTIONS.join(", ")}`);
  }
  const all = values.all === true;
  const needsId = action === "show" || ((action === "replay" || action === "purge") && !all);
  if (all && (action === "list" || action === "show")) throw new UsageError(`--all does not apply to ${action}`);
  if (values.queue !== undefined && action !== "list" && !all) throw new UsageError("--queue applies to list, and to replay/purge with --all");
  const parsed = appRefOf(values, rest, needsId ? 1 : 0);
  if (parsed === undefined) {
    const idPart = needsId ? (action === "show" ? "<id> " : "<id|--all> ") : action === "list" ? "" : "--all ";
    throw new UsageError(`usage: dead-letters ${action} ${idPart}${APP_USAGE}`);
  }
  const id = needsId ? parsed.rest[0] : undefined;
  return { action: action as Action, id, all, queue: values.queue, json: values.json === true, app: parsed.app };
}

/** Carries out a request on an open store; returns the exit code. `tasks`: the app's, when it is known (not with --store). */
export async function operate(store: Store, request: DeadLetterRequest, output: Output, tasks?: readonly TaskQueues[]): Promise<number> {
  const letters = store.deadLetters;
  switch (request.action) {
    case "list": {
      const list = await letters.list(request.queue);
      if (request.json) output.out(JSON.stringify(list.map(toJson), null, 2));
      else if (list.length === 0) output.out("no dead letters");
      else for (const line of listTable(list)) output.out(line);
      if (list.length === 0) await hintQueue(store, request, tasks, output);
      return 0;
    }
    case "show": {
      const letter = await letters.get(request.id as string);
      if (!letter) return notFound(request.id as string, output);
      if (request.json) output.out(JSON.stringify(toJson(letter), null, 2));
      else for (const line of details(letter)) output.out(line);
      return 0;
    }
    case "replay": {
      const chosen = request.all ? await letters.list(request.queue) : [await letters.get(request.id as string)];
      if (chosen[0] === undefined && !request.all) return notFound(request.id as string, output);
      // Given the app: a letter whose queue none of its tasks reads would go back where nothing
      // takes it (a task renamed or removed). It stays a dead letter, in sight, instead.
      const read = tasks === undefined ? undefined : new Set(tasks.map((t) => t.queue));
      const kept = chosen.filter((l): l is DeadLetter => l !== undefined && read !== undefined && !read.has(l.queue));
      let replayed = 0;
      for (const letter of chosen) {
        if (letter === undefined || kept.includes(letter)) continue;
        if (await letters.replay(letter.message.id)) replayed++;
        else if (!request.all) return notFound(letter.message.id, output);
      }
      if (request.all || kept.length === 0) report(request, "replayed", replayed, output);
      for (const line of unreadQueues(kept)) output.err(line);
      if (chosen.length === 0) await hintQueue(store, request, tasks, output);
      return kept.length > 0 ? 1 : 0;
    }
    case "purge": {
      const purged = request.all ? await letters.purge(request.queue === undefined ? {} : { queue: request.queue }) : await letters.purge({ id: request.id as string });
      if (!request.all && purged === 0) return notFound(request.id as string, output);
      report(request, "purged", purged, output);
      if (request.all && purged === 0) await hintQueue(store, request, tasks, output);
      return 0;
    }
  }
}

function report(request: DeadLetterRequest, verb: string, count: number, output: Output): void {
  if (request.json) output.out(JSON.stringify({ [verb]: count }));
  else output.out(`${verb} ${count} dead letter${count === 1 ? "" : "s"}${verb === "replayed" && count > 0 ? " (their tasks handle them when the app runs)" : ""}`);
}

/** When nothing matched: a --queue that names no queue known. On stderr, so that `--json` output stays one document. */
async function hintQueue(store: Store, request: DeadLetterRequest, tasks: readonly TaskQueues[] | undefined, output: Output): Promise<void> {
  if (request.queue === undefined) return;
  const hint = await queueHint(store, request.queue, tasks);
  if (hint !== undefined) output.err(hint);
}

/** One line per queue whose letters were kept: no task of the app reads it. */
function unreadQueues(kept: readonly DeadLetter[]): string[] {
  const byQueue = new Map<string, DeadLetter[]>();
  for (const letter of kept) byQueue.set(letter.queue, [...(byQueue.get(letter.queue) ?? []), letter]);
  return [...byQueue].map(([queue, list]) => {
    const n = list.length;
    return visible(`error: ${n} dead letter${n === 1 ? "" : "s"} of queue "${queue}" (task "${list[0].task}") not replayed: no task of this app reads that queue (renamed or removed?), so ${n === 1 ? "it" : "they"} would wait there unseen; give a task the name "${list[0].task}" again, or purge ${n === 1 ? "it" : "them"}`);
  });
}

function notFound(id: string, output: Output): number {
  output.err(`error: no dead letter with id ${id}`);
  return 1;
}

function listTable(list: readonly DeadLetter[]): string[] {
  return formatTable(
    ["ID", "TASK", "QUEUE", "ATTEMPTS", "DIED AT", "ERROR"],
    list.map((l) => [l.message.id, l.task, l.queue, String(l.attempts), time(l.diedAt), clip(l.error, 60)].map(visible)),
  );
}

function details(letter: DeadLetter): string[] {
  const { message } = letter;
  return [
    `id:          ${message.id}`,
    `task:        ${letter.task}`,
    `queue:       ${letter.queue}`,
    `attempts:    ${letter.attempts}`,
    `enqueued at: ${time(message.enqueuedAt)}`,
    `died at:     ${time(letter.diedAt)}`,
    `error:       ${letter.error}`,
    ...(message.raw ? [`raw body:    ${message.raw.length} bytes`] : []),
    "payload:",
    ...JSON.stringify(redactSecretHeaders(message.payload) ?? null, printableReplacer, 2).split("\n").map((l) => `  ${l}`),
  ].map(visible);
}

/** A dead letter as JSON (`list --json` and `show --json`): the raw body as base64, times as ISO strings, secret headers redacted. */
function toJson(letter: DeadLetter): Record<string, unknown> {
  const { message } = letter;
  return {
    id: message.id,
    task: letter.task,
    queue: letter.queue,
    attempts: letter.attempts,
    error: letter.error,
    diedAt: new Date(letter.diedAt).toISOString(),
    enqueuedAt: new Date(message.enqueuedAt).toISOString(),
    payload: JSON.parse(JSON.stringify(redactSecretHeaders(message.payload) ?? null, printableReplacer)) as unknown,
    ...(message.raw ? { rawBase64: message.raw.toString("base64") } : {}),
  };
}


function time(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
}
