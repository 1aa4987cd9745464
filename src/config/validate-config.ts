import { buildAuth } from "./auth-registry";
import { didYouMean } from "../util/did-you-mean";
import type { IssueList } from "./issue-list";
import type { KeySegment } from "./key-path";
import { AppConfig } from "./schema/app-config";
import { QUEUE_NAME, QueueResourceConfig } from "./schema/queue-resource-config";
import { isMapping } from "./schema/rules";
import type { TaskConfig } from "./schema/task-config";
import { DEDUPE_PRESETS, DedupeConfig, WebhookResourceConfig } from "./schema/webhook-resource-config";
import { WorkerConfigDocument } from "./schema/worker-config";
import { validateSection } from "./validate-section";
import { parseFilter } from "./filter/parse-filter";
import { checkConsoleAuth } from "./check-console-auth";
import { fromText } from "./schema/rules";
import { ConcurrencyConfig } from "./schema/flow-config";
import { checkFlowKeyPath } from "./flow-key";

export type ResourceConfig = WebhookResourceConfig | QueueResourceConfig;

/** The file's content once its shape is checked (it is usable only when no issue was recorded). */
export interface ValidatedConfig {
  readonly app: AppConfig;
  readonly resources: ReadonlyMap<string, ResourceConfig>;
  readonly tasks: readonly TaskConfig[];
}

const RESOURCE_TYPES = ["webhook", "queue"];

/**
 * Checks the whole document: the schema (class-validator), each resource per its type, auth
 * blocks, and the references between tasks and resources. Records every problem found.
 */
export function validateConfig(file: unknown, issues: IssueList): ValidatedConfig {
  const empty: ValidatedConfig = { app: new AppConfig(), resources: new Map(), tasks: [] };
  if (!isMapping(file)) {
    issues.add([], file === null || file === undefined ? "the file is empty; expected a mapping with resources and tasks" : "expected a mapping with resources and tasks at the top level");
    return empty;
  }
  const raw = withoutExtensions(file);
  const document = validateSection(WorkerConfigDocument, raw, [], issues);
  const resources = isMapping(raw.resources) ? validateResources(raw.resources, issues) : new Map<string, ResourceConfig>();
  const tasks = Array.isArray(document.tasks) ? document.tasks.filter((t): t is TaskConfig => isMapping(t)) : [];
  const config: ValidatedConfig = { app: isMapping(document.app) ? document.app : new AppConfig(), resources, tasks };
  const consoleBlock = isMapping(raw.app) ? raw.app.console : undefined;
  if (isMapping(consoleBlock) && consoleBlock.auth !== undefined) checkConsoleAuth(consoleBlock.auth, ["app", "console", "auth"], issues);
  if (isMapping(raw.resources) && Array.isArray(raw.tasks)) checkReferences(raw.tasks, resources, new Set(Object.keys(raw.resources)), issues);
  if (Array.isArray(raw.tasks)) {
    raw.tasks.forEach((task, index) => {
      if (!isMapping(task)) return;
      const webhook = typeof task.source === "string" && resources.get(task.source)?.type === "webhook";
      checkFlow(Array.isArray(document.tasks) ? (document.tasks[index] as TaskConfig | undefined) : undefined, task, index, webhook, issues);
      if (task.filter === undefined) return;
      const source = typeof task.source === "string" ? resources.get(task.source) : undefined;
      if (source?.type === "queue") issues.add(["tasks", index, "filter"], `a filter matches a webhook's headers, query and body; this task's source "${String(task.source)}" is a queue`);
      else parseFilter(task.filter, ["tasks", index, "filter"], issues);
    });
  }
  return config;
}

/**
 * The document without its top-level `x-` keys: a place for anchors that tasks and resources
 * take by alias (`x-retry: &retry {...}`, then `retry: *retry`), as Compose files have it.
 */
function withoutExtensions(document: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(document)) if (!key.startsWith("x-")) out[key] = document[key];
  return out;
}

/** `concurrency` (an integer, or { limit, key?, perProcess? }) and the key paths of `concurrency`, `rateLimit`, `debounce` and `batch`. */
function checkFlow(instance: TaskConfig | undefined, raw: Record<string, unknown>, index: number, webhook: boolean, issues: IssueList): void {
  const at: KeySegment[] = ["tasks", index, "concurrency"];
  const validated = isMapping(instance) ? instance : undefined;
  if (raw.concurrency !== undefined) {
    if (isMapping(raw.concurrency)) {
      const section = validateSection(ConcurrencyConfig, raw.concurrency, at, issues);
      if (typeof section.key === "string") checkFlowKeyPath(section.key, webhook, [...at, "key"], issues);
      if (validated) validated.concurrency = section;
    } else {
      const value = fromText(raw.concurrency);
      if (!Number.isInteger(value) || (value as number) < 1) issues.add(at, "must be an integer (1 or more), or a mapping { limit, key?, perProcess? }");
      else if (validated) validated.concurrency = value;
    }
  }
  for (const option of ["rateLimit", "debounce", "batch"]) {
    const section = raw[option];
    if (isMapping(section) && typeof section.key === "string") checkFlowKeyPath(section.key, webhook, ["tasks", index, option, "key"], issues);
  }
}

function validateResources(block: Record<string, unknown>, issues: IssueList): Map<string, ResourceConfig> {
  const resources = new Map<string, ResourceConfig>();
  for (const [name, value] of Object.entries(block)) {
    const path: KeySegment[] = ["resources", name];
    if (!isMapping(value)) {
      issues.add(path, "must be a mapping with a type (webhook or queue)");
      continue;
    }
    if (value.type === "webhook") {
      const resource = validateSection(WebhookResourceConfig, value, path, issues);
      if (value.auth !== undefined && isMapping(value.auth)) buildAuth(value.auth, [...path, "auth"], issues);
      if (value.dedupe !== undefined) checkDedupe(value.dedupe, [...path, "dedupe"], issues);
      resources.set(name, resource);
    } else if (value.type === "queue") {
      if (!QUEUE_NAME.test(name)) issues.add(path, "a queue's name must be 1-200 letters, digits or _ . : - /");
      resources.set(name, validateSection(QueueResourceConfig, value, path, issues));
    } else if (value.type === undefined) {
      issues.add([...path, "type"], `is required; one of: ${RESOURCE_TYPES.join(", ")}`);
    } else {
      const guess = typeof value.type === "string" ? didYouMean(value.type, RESOURCE_TYPES) : undefined;
      issues.add([...path, "type"], `must be one of: ${RESOURCE_TYPES.join(", ")}${guess ? ` (did you mean "${guess}"?)` : ""}`);
    }
  }
  return resources;
}

function checkDedupe(value: unknown, path: KeySegment[], issues: IssueList): void {
  if (typeof value === "string") {
    if (!(DEDUPE_PRESETS as readonly string[]).includes(value)) issues.add(path, `must be one of: ${DEDUPE_PRESETS.join(", ")}, or a mapping`);
    return;
  }
  if (!isMapping(value)) {
    issues.add(path, `must be a preset (${DEDUPE_PRESETS.join(", ")}) or a mapping with preset, header, bodyField, ttlMs`);
    return;
  }
  validateSection(DedupeConfig, value, path, issues);
  if (value.preset === undefined && value.header === undefined && value.bodyField === undefined) {
    issues.add(path, "needs a preset, a header or a bodyField");
  }
}

/** Source and emit names exist and have the right type; names are unique; every webhook feeds a task. */
function checkReferences(tasks: readonly unknown[], resources: ReadonlyMap<string, ResourceConfig>, declared: ReadonlySet<string>, issues: IssueList): void {
  const names = new Map<string, number>();
  const consumers = new Map<string, number>();
  const known = [...resources.keys()];
  let unknownSources = 0;
  tasks.forEach((task, index) => {
    if (!isMapping(task)) return;
    const at = (key: string): KeySegment[] => ["tasks", index, key];
    const { name, source, emit } = task;
    if (typeof name === "string") {
      const first = names.get(name);
      if (first !== undefined) issues.add(at("name"), `duplicate task name "${name}" (also tasks[${first}]); task names must be unique`);
      else names.set(name, index);
    }
    if (typeof source === "string" && source.length > 0) {
      const resource = resources.get(source);
      if (!resource) {
        // A resource refused for its own problem (a bad type) exists: that problem is the one to tell.
        if (!declared.has(source)) issues.add(at("source"), unknownResource(source, known));
        unknownSources++;
      } else if (!consumers.has(source)) {
        // Several tasks may share a source: each gets its own copy of every event (fan-out).
        consumers.set(source, index);
      }
    }
    if (typeof emit === "string" && emit.length > 0) {
      const resource = resources.get(emit);
      if (!resource) {
        if (!declared.has(emit)) issues.add(at("emit"), unknownResource(emit, known, "queue"));
      } else if (resource.type !== "queue") issues.add(at("emit"), `resource "${emit}" is a ${resource.type}; emit needs a resource of type queue`);
      else if (emit === source) issues.add(at("emit"), `task emits to its own source "${emit}": that would loop forever`);
    }
  });
  // A misspelt source leaves its webhook unused: telling both would say the same thing twice.
  if (unknownSources > 0) return;
  for (const [name, resource] of resources) {
    if (resource.type === "webhook" && !consumers.has(name)) {
      issues.add(["resources", name], `no task has this webhook as its source; add a task with source: ${name}, or remove it`);
    }
  }
}

function unknownResource(name: string, known: readonly string[], kind?: string): string {
  const guess = didYouMean(name, known);
  const list = known.length > 0 ? `; resources: ${known.join(", ")}` : "; no resources are defined";
  return `no ${kind ? `${kind} ` : ""}resource named "${name}"${guess ? ` (did you mean "${guess}"?)` : ""}${list}`;
}
