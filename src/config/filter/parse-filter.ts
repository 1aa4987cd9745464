import { didYouMean } from "../../util/did-you-mean";
import type { IssueList } from "../issue-list";
import type { KeySegment } from "../key-path";
import { fromText, isMapping } from "../schema/rules";
import { COMBINATORS, OPERATORS, ROOTS, type Comparison, type FieldRef, type FilterNode, type Scalar } from "./filter-node";

/**
 * Checks a YAML `filter:` and builds it. A condition is a mapping whose entries must all hold:
 * a field (`headers.<name>`, `query.<name>`, `body` or `body.<path>`) with a value to equal or a
 * mapping of operators, or `allOf` / `anyOf` with a list of conditions. Every problem is
 * recorded under its key path; undefined when there was one.
 */
export function parseFilter(value: unknown, path: readonly KeySegment[], issues: IssueList): FilterNode | undefined {
  const before = issues.items.length;
  const node = condition(value, path, issues);
  return issues.items.length === before ? node : undefined;
}

function condition(value: unknown, path: readonly KeySegment[], issues: IssueList): FilterNode {
  const parts: FilterNode[] = [];
  if (!isMapping(value) || Object.keys(value).length === 0) {
    issues.add(path, "must be a mapping of conditions: fields (body.action, headers.x-github-event, query.mode) or allOf/anyOf");
    return { kind: "allOf", of: parts };
  }
  for (const [key, entry] of Object.entries(value)) {
    const at = [...path, key];
    if (key === "allOf" || key === "anyOf") {
      if (!Array.isArray(entry) || entry.length === 0) issues.add(at, `must be a non-empty list of conditions`);
      else parts.push({ kind: key, of: entry.map((item, i) => condition(item, [...at, i], issues)) });
      continue;
    }
    const field = fieldOf(key);
    if (field === undefined) {
      issues.add(at, unknownKey(key));
      continue;
    }
    for (const comparison of comparisons(entry, at, issues)) parts.push({ kind: "test", field, comparison });
  }
  return parts.length === 1 ? parts[0] : { kind: "allOf", of: parts };
}

/** "body.pull_request.base.ref" -> body, [pull_request, base, ref]; "headers.X-GitHub-Event" -> headers, [x-github-event]. */
function fieldOf(key: string): FieldRef | undefined {
  if (key === "body") return { root: "body", keys: [] };
  const dot = key.indexOf(".");
  const root = key.slice(0, dot);
  const rest = key.slice(dot + 1);
  if (dot < 1 || rest === "") return undefined;
  if (root === "headers") return { root, keys: [rest.toLowerCase()] };
  if (root === "query") return { root, keys: [rest] };
  if (root === "body" && rest.split(".").every((k) => k.length > 0)) return { root, keys: rest.split(".") };
  return undefined;
}

function unknownKey(key: string): string {
  if (key === "headers" || key === "query") return `names no ${key === "headers" ? "header" : "parameter"}: write ${key}.<name>`;
  const dot = key.indexOf(".");
  const root = dot === -1 ? key : key.slice(0, dot);
  if ((ROOTS as readonly string[]).includes(root)) return `has an empty name or path segment: write ${root === "body" ? "body.<path> (body.pull_request.base.ref)" : `${root}.<name>`}`;
  const guess = didYouMean(root, [...ROOTS, ...COMBINATORS]);
  const hint = guess === undefined ? "" : ` (did you mean "${dot === -1 || !(ROOTS as readonly string[]).includes(guess) ? guess : guess + key.slice(dot)}"?)`;
  return `not a field or a combinator${hint}; use headers.<name>, query.<name>, body.<path> (dot-separated, e.g. body.pull_request.base.ref), allOf or anyOf`;
}

function isScalar(value: unknown): value is Scalar {
  return value === null || ["string", "number", "boolean"].includes(typeof value);
}

/** A field's value: a scalar to equal, or a mapping of operators that must all hold. */
function comparisons(value: unknown, at: readonly KeySegment[], issues: IssueList): Comparison[] {
  if (isScalar(value)) return [{ op: "equals", value }];
  if (Array.isArray(value)) {
    issues.add(at, "a list is not a condition: to match one of several values, write {oneOf: [...]}");
    return [];
  }
  if (!isMapping(value) || Object.keys(value).length === 0) {
    issues.add(at, `must be a value to equal, or a mapping of operators (${OPERATORS.join(", ")})`);
    return [];
  }
  const out: Comparison[] = [];
  for (const [op, operand] of Object.entries(value)) {
    const comparison = operator(op, operand, [...at, op], issues);
    if (comparison !== undefined) out.push(comparison);
  }
  return out;
}

function operator(op: string, operand: unknown, at: readonly KeySegment[], issues: IssueList): Comparison | undefined {
  switch (op) {
    case "equals":
      if (isScalar(operand)) return { op, value: operand };
      issues.add(at, "must be a string, a number, true, false or null");
      return undefined;
    case "oneOf":
      if (Array.isArray(operand) && operand.length > 0 && operand.every(isScalar)) return { op, values: operand };
      issues.add(at, "must be a non-empty list of strings, numbers, booleans or null");
      return undefined;
    case "exists": {
      const flag = fromText(operand);
      if (typeof flag === "boolean") return { op, value: flag };
      issues.add(at, "must be true or false");
      return undefined;
    }
    case "prefix":
      if (typeof operand === "string" && operand.length > 0) return { op, value: operand };
      issues.add(at, "must be a non-empty string");
      return undefined;
    case "gt":
    case "gte":
    case "lt":
    case "lte": {
      const number = fromText(operand);
      if (typeof number === "number" && Number.isFinite(number)) return { op, value: number };
      issues.add(at, "must be a number");
      return undefined;
    }
    default: {
      const guess = didYouMean(op, OPERATORS);
      issues.add(at, `unknown operator${guess ? ` (did you mean "${guess}"?)` : ""}; operators: ${OPERATORS.join(", ")}`);
      return undefined;
    }
  }
}
