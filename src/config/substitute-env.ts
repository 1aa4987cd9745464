import { isMap, isPair, isScalar, isSeq, type Document } from "yaml";
import type { IssueList } from "./issue-list";
import type { KeySegment } from "./key-path";

export type Environment = Readonly<Record<string, string | undefined>>;

/** `$${` (an escaped `${`), `${...}`, or an unclosed `${`. */
const TOKEN = /\$\$\{|\$\{([^{}]*)\}|\$\{/g;
const EXPRESSION = /^([A-Za-z_][A-Za-z0-9_]*)(?::-([\s\S]*))?$/;

/**
 * Replaces `${NAME}` and `${NAME:-default}` in every string value of the document, in place,
 * so secrets can stay out of the file. Only string scalars are touched: never keys, never
 * numbers or booleans written in the file, and a substituted value is never parsed as YAML.
 * The default applies when the variable is unset or empty; `$${` stands for a literal `${`.
 * A variable that is unset and has no default is an issue naming the key path and the variable.
 */
export function substituteEnv(document: Document.Parsed, env: Environment, issues: IssueList): void {
  visit(document.contents, [], env, issues);
}

/** Substitutes one string; returns undefined (and records issues) when it cannot. */
export function expandString(text: string, env: Environment, report: (message: string) => void): string | undefined {
  if (!text.includes("${")) return text;
  let failed = false;
  const out = text.replace(TOKEN, (token: string, inner: string | undefined) => {
    if (token === "$${") return "${";
    if (inner === undefined) {
      report('has an unclosed "${"; write "$${" for a literal "${"');
      failed = true;
      return token;
    }
    const match = EXPRESSION.exec(inner);
    if (!match) {
      report(`has a malformed "\${${inner}}": expected \${NAME} or \${NAME:-default}`);
      failed = true;
      return token;
    }
    const [, name, fallback] = match;
    const value = env[name];
    if (value !== undefined && (value !== "" || fallback === undefined)) return value;
    if (fallback !== undefined) return fallback;
    report(`environment variable ${name} is not set (set it, or give a default: \${${name}:-default})`);
    failed = true;
    return token;
  });
  return failed ? undefined : out;
}

function visit(node: unknown, path: KeySegment[], env: Environment, issues: IssueList): void {
  if (isMap(node)) {
    for (const pair of node.items) {
      if (!isPair(pair)) continue;
      const key = isScalar(pair.key) ? String(pair.key.value) : "?";
      visit(pair.value, [...path, key], env, issues);
    }
  } else if (isSeq(node)) {
    node.items.forEach((item, index) => visit(item, [...path, index], env, issues));
  } else if (isScalar(node) && typeof node.value === "string") {
    const expanded = expandString(node.value, env, (message) => issues.addUnsubstituted(path, message));
    if (expanded !== undefined) node.value = expanded;
  }
}
