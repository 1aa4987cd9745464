import { declareKeyPath } from "../app/flow/flow-record";
import type { KeySegment } from "./key-path";
import type { IssueList } from "./issue-list";

const WEBHOOK_ROOTS = ["body", "headers", "query"];

/**
 * Checks a YAML flow key path (`concurrency.key`, `rateLimit.key`): a webhook task's starts at
 * body, headers or query; a queue task's reads into the value. Records an issue when wrong.
 */
export function checkFlowKeyPath(path: string, webhook: boolean, at: readonly KeySegment[], issues: IssueList): void {
  const [root, ...rest] = path.split(".");
  if (!webhook) return;
  if (!WEBHOOK_ROOTS.includes(root!)) issues.add(at, `must start with body, headers or query (a webhook task's event), e.g. body.account.id; got "${path}"`);
  else if (root !== "body" && rest.length !== 1) issues.add(at, `${root}.<name> names one ${root === "headers" ? "header" : "query parameter"}, e.g. ${root === "headers" ? "headers.x-shop-domain" : "query.shop"}; got "${path}"`);
}

/**
 * The key function of a path: the value there, as a string (a number or a boolean as written);
 * undefined when absent, or when it is an object or a list (no key: the task-wide group).
 * Header names are matched in lower case, as Node gives them.
 */
export function flowKeyFunction(path: string, webhook: boolean): (event: unknown) => string | undefined {
  const segments = path.split(".");
  if (webhook && segments[0] === "headers") segments[1] = segments[1]!.toLowerCase();
  return declareKeyPath((event: unknown) => {
    let value: unknown = event;
    for (const segment of segments) {
      if (typeof value !== "object" || value === null || !Object.hasOwn(value, segment)) return undefined;
      value = (value as Record<string, unknown>)[segment];
    }
    if (typeof value === "string") return value;
    if (typeof value === "number" || typeof value === "boolean" || typeof value === "bigint") return String(value);
    return undefined;
  }, path, webhook);
}
