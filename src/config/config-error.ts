/** One problem found in a configuration file. */
export interface ConfigIssue {
  /** Key path of the offending value, e.g. `resources.github.port`; "" for the file as a whole. */
  readonly path: string;
  /** What is wrong, without the path, e.g. "must be an integer from 0 to 65535". */
  readonly message: string;
  /** 1-based line in the file, when known. */
  readonly line?: number;
  /** 1-based column, when known (syntax errors). */
  readonly column?: number;
}

/**
 * A configuration that cannot be used. Lists every problem found (not only the first), each
 * naming its key path and, where known, its line. `message` holds one problem per line.
 */
export class ConfigError extends Error {
  /** The configuration file (absolute path), when the error concerns one. */
  readonly file: string | undefined;
  readonly issues: readonly ConfigIssue[];

  constructor(file: string | undefined, issues: readonly ConfigIssue[]) {
    const sorted = sortIssues(issues);
    const lines = sorted.map((issue) => formatIssue(issue, file));
    const head = `${sorted.length} problem${sorted.length === 1 ? "" : "s"} in ${file ?? "the configuration"}`;
    super(`${head}:\n${lines.map((l) => `  ${l}`).join("\n")}`);
    this.name = "ConfigError";
    this.file = file;
    this.issues = sorted;
  }

  /** One line per problem, in the `file:line: path: message` form editors understand. */
  lines(displayFile: string | undefined = this.file): string[] {
    return this.issues.map((issue) => formatIssue(issue, displayFile));
  }
}

/** `worker.yaml:12: resources.github.port: must be an integer`. */
export function formatIssue(issue: ConfigIssue, file: string | undefined): string {
  const where = file === undefined ? "" : issue.line === undefined ? `${file}: ` : `${file}:${issue.line}: `;
  const path = issue.path === "" ? "" : `${issue.path}: `;
  return `${where}${path}${issue.message}`;
}

/** File order: by line, then by path; issues without a line come last. */
function sortIssues(issues: readonly ConfigIssue[]): ConfigIssue[] {
  const seen = new Set<string>();
  const unique = issues.filter((issue) => {
    const key = `${issue.path}\u0000${issue.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  return unique.sort((a, b) => (a.line ?? Infinity) - (b.line ?? Infinity) || (a.column ?? 0) - (b.column ?? 0) || a.path.localeCompare(b.path));
}
