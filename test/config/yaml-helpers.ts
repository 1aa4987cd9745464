import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { ConfigError, type ConfigIssue } from "../../src/config/index";

/** test/fixtures/yaml in the source tree (tests run from dist/test/...). */
export const FIXTURES = join(__dirname, "../../../test/fixtures/yaml");
/** Absolute handler module paths, usable in YAML files written anywhere. */
export const CJS_HANDLERS = join(FIXTURES, "handlers.cjs");
export const ESM_HANDLERS = join(FIXTURES, "handlers.mjs");

/**
 * A temporary directory for YAML files written by a test, removed after each test of the
 * calling `describe` block.
 */
export function useTempDir(): { dir(): string; write(name: string, text: string): string } {
  let current: string | undefined;
  afterEach(() => {
    if (current) rmSync(current, { recursive: true, force: true });
    current = undefined;
  });
  const dir = () => (current ??= mkdtempSync(join(tmpdir(), "webhook-tasks-yaml-")));
  return {
    dir,
    write(name, text) {
      const file = join(dir(), name);
      writeFileSync(file, text);
      return file;
    },
  };
}

/** Awaits a promise expected to reject with a ConfigError; returns its issues. */
export async function configIssues(promise: Promise<unknown>): Promise<readonly ConfigIssue[]> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ConfigError) return error.issues;
    throw error;
  }
  expect.fail("expected a ConfigError");
}

/** The issue at `path`; fails the test when there is none. */
export function issueAt(issues: readonly ConfigIssue[], path: string): ConfigIssue {
  const issue = issues.find((i) => i.path === path);
  if (!issue) expect.fail(`no issue at ${path}; issues: ${JSON.stringify(issues, null, 1)}`);
  return issue;
}

/** A minimal valid file around `resources`/`tasks` fragments. */
export function worker(resources: string, tasks: string, app = "app: {store: memory}"): string {
  return `${app}\nresources:\n${resources}\ntasks:\n${tasks}\n`;
}

/** The JSON lines a fixture handler appended to `file` (none while it does not exist yet). */
export function outLines(file: string): Array<{ kind: string; value: unknown }> {
  try {
    return readFileSync(file, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { kind: string; value: unknown });
  } catch {
    return [];
  }
}
