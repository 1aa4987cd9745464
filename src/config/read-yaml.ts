import { CST, isAlias, isMap, isPair, isScalar, isSeq, LineCounter, parseDocument, Parser, type Document, type Node } from "yaml";
import type { ConfigIssue } from "./config-error";
import { formatKeyPath, type KeySegment } from "./key-path";
import type { LineLookup } from "./issue-list";

/** A parsed YAML file: its syntax tree, and where each key sits. */
export interface YamlFile {
  readonly document: Document.Parsed;
  /** 1-based line of the key (or list item) at a path, when the path is in the file. */
  readonly lineOf: LineLookup;
}

export type ReadYamlResult = { readonly ok: true; readonly file: YamlFile } | { readonly ok: false; readonly issues: ConfigIssue[] };

/**
 * Parses YAML text keeping positions, so later errors can name lines. Syntax errors (and
 * duplicate keys) are returned as issues with their line and column; nothing is thrown.
 */
export function readYaml(text: string): ReadYamlResult {
  const lineCounter = new LineCounter();
  // Duplicate keys are found below, in one pass: the parser's own check compares every key of
  // a mapping with every other (20,000 resources took seconds).
  const document = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: false, strict: true, merge: true });
  const position = (offset: number) => lineCounter.linePos(offset);
  const duplicate = document.errors.length === 0 ? firstDuplicateKey(document.contents) : undefined;
  if (duplicate !== undefined) {
    const { line, col } = position(duplicate);
    return { ok: false, issues: [{ path: "", message: "YAML syntax error: Map keys must be unique", line, column: col }] };
  }
  if (document.errors.length > 0) {
    // The parser's recovery is poor: errors after the first are mostly its consequences.
    const [error, ...rest] = document.errors;
    const unclosed = error.code === "MISSING_CHAR" ? unclosedQuoteAt(text) : undefined;
    const { line, col } = position(unclosed ?? error.pos[0]);
    let message = unclosed === undefined ? firstLine(error.message) : "a quoted string is not closed (missing closing quote)";
    const lineText = text.split("\n")[line - 1] ?? "";
    if (lineText.includes("${") && /[{[]/.test(lineText.replace(/\$\{[^}]*\}/g, ""))) {
      message += " (inside { } or [ ], quote values that use ${...}: '${VAR}')";
    }
    if (rest.length > 0) message += ` (and ${rest.length} more syntax error${rest.length === 1 ? "" : "s"} after it, probably caused by this one)`;
    return { ok: false, issues: [{ path: "", message: `YAML syntax error: ${message}`, line, column: col }] };
  }
  const lines = new Map<string, number>();
  recordLines(document.contents, [], lines, (offset) => position(offset).line);
  return { ok: true, file: { document, lineOf: (segments) => lines.get(formatKeyPath(segments)) } };
}

function recordLines(node: unknown, path: KeySegment[], lines: Map<string, number>, lineAt: (offset: number) => number): void {
  if (isMap(node)) {
    for (const pair of node.items) {
      if (!isPair(pair)) continue;
      const key = isScalar(pair.key) ? String(pair.key.value) : undefined;
      if (key === undefined) continue;
      const keyPath = [...path, key];
      const start = (pair.key as Node).range?.[0];
      if (start !== undefined) lines.set(formatKeyPath(keyPath), lineAt(start));
      recordLines(pair.value, keyPath, lines, lineAt);
    }
  } else if (isSeq(node)) {
    node.items.forEach((item, index) => {
      const itemPath = [...path, index];
      const start = isAlias(item) || isScalar(item) || isMap(item) || isSeq(item) ? item.range?.[0] : undefined;
      if (start !== undefined) lines.set(formatKeyPath(itemPath), lineAt(start));
      recordLines(item, itemPath, lines, lineAt);
    });
  }
}

/**
 * Where the first key given twice in one mapping starts (in file order), as the parser's
 * `uniqueKeys` tells them apart: scalars of one type and value; merge keys (`<<`, parsed as a symbol) may repeat.
 */
function firstDuplicateKey(root: unknown): number | undefined {
  let first: number | undefined;
  const visit = (node: unknown): void => {
    if (isMap(node)) {
      const seen = new Set<string>();
      for (const pair of node.items) {
        if (!isPair(pair)) continue;
        const key = pair.key;
        if (isScalar(key) && key.value !== "<<" && typeof key.value !== "symbol") {
          const id = `${typeof key.value}:${String(key.value)}`;
          const start = key.range?.[0];
          if (seen.has(id) && start !== undefined && (first === undefined || start < first)) first = start;
          seen.add(id);
        }
        visit(pair.value);
      }
    } else if (isSeq(node)) {
      for (const item of node.items) visit(item);
    }
  };
  visit(root);
  return first;
}

function firstLine(message: string): string {
  const line = message.split("\n")[0].trim();
  return line.endsWith(":") ? line.slice(0, -1) : line;
}

/**
 * Where an unclosed quoted scalar starts: the parser reports the end of the file, which helps
 * nobody, so this looks the opening quote up in the syntax tree.
 */
function unclosedQuoteAt(text: string): number | undefined {
  let found: number | undefined;
  for (const token of new Parser().parse(text)) {
    if (token.type !== "document") continue;
    CST.visit(token, (item) => {
      for (const part of [item.key, item.value]) {
        if (found !== undefined || !part) continue;
        if (part.type !== "double-quoted-scalar" && part.type !== "single-quoted-scalar") continue;
        const quote = part.type === "double-quoted-scalar" ? '"' : "'";
        if (part.source.length < 2 || !part.source.endsWith(quote)) found = part.offset;
      }
    });
  }
  return found;
}

/**
 * Where toJS failed on aliases: the first alias whose anchor is not set before it, else the
 * first alias of the file (aliases expanding too far start there).
 */
export function aliasAtFault(document: Document.Parsed): KeySegment[] | undefined {
  let first: KeySegment[] | undefined;
  let unresolved: KeySegment[] | undefined;
  const walk = (node: unknown, path: KeySegment[]): void => {
    if (unresolved) return;
    if (isAlias(node)) {
      first ??= path;
      if (node.resolve(document) === undefined) unresolved = path;
    } else if (isMap(node)) {
      for (const pair of node.items) {
        if (isPair(pair) && isScalar(pair.key)) walk(pair.value, [...path, String(pair.key.value)]);
      }
    } else if (isSeq(node)) node.items.forEach((item, index) => walk(item, [...path, index]));
  };
  walk(document.contents, []);
  return unresolved ?? first;
}
