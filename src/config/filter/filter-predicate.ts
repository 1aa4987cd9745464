import type { WebhookEvent } from "../../sources/webhook/webhook-event";
import type { Comparison, FieldRef, FilterNode, Scalar } from "./filter-node";

/**
 * Runs a checked filter on an event. Headers and query parameters are text, so a number or
 * boolean they are compared with is compared as text (a number also matching text that is a
 * decimal number of its value: "2.10" for 2.10, which YAML reads as 2.1); body values compare strictly (1 is not
 * "1"). A repeated query parameter holds when any of its values does. Numeric comparisons take
 * numbers, and text that is a decimal number.
 */
export function filterPredicate(node: FilterNode): (event: WebhookEvent) => boolean {
  return (event) => holds(node, event);
}

function holds(node: FilterNode, event: WebhookEvent): boolean {
  if (node.kind === "allOf") return node.of.every((n) => holds(n, event));
  if (node.kind === "anyOf") return node.of.some((n) => holds(n, event));
  const value = read(node.field, event);
  const comparison = node.comparison;
  if (comparison.op === "exists") return (value !== undefined) === comparison.value;
  const text = node.field.root !== "body";
  const values = Array.isArray(value) && node.field.root === "query" ? value : [value];
  return values.some((v) => v !== undefined && compare(comparison, v, text));
}

function read(field: FieldRef, event: WebhookEvent): unknown {
  let value: unknown = field.root === "headers" ? event.headers : field.root === "query" ? event.query : event.body;
  for (const key of field.keys) {
    if (typeof value !== "object" || value === null || Buffer.isBuffer(value) || !Object.hasOwn(value, key)) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

function same(expected: Scalar, actual: unknown, text: boolean): boolean {
  if (!text) return expected === actual;
  // A number read from YAML has lost how it was written (2.10 is 2.1): text of the same number matches.
  return String(expected) === actual || (typeof expected === "number" && numeric(actual) === expected);
}

const DECIMAL = /^\s*-?(?:\d+|\d*\.\d+)(?:[eE][-+]?\d+)?\s*$/;

function numeric(value: unknown): number | undefined {
  if (typeof value === "number") return value;
  return typeof value === "string" && DECIMAL.test(value) ? Number(value) : undefined;
}

function compare(comparison: Exclude<Comparison, { op: "exists" }>, value: unknown, text: boolean): boolean {
  switch (comparison.op) {
    case "equals":
      return same(comparison.value, value, text);
    case "oneOf":
      return comparison.values.some((v) => same(v, value, text));
    case "prefix":
      return typeof value === "string" && value.startsWith(comparison.value);
    default: {
      const n = numeric(value);
      if (n === undefined) return false;
      const bound = comparison.value;
      return comparison.op === "gt" ? n > bound : comparison.op === "gte" ? n >= bound : comparison.op === "lt" ? n < bound : n <= bound;
    }
  }
}
