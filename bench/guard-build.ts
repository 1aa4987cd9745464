import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "./settings";

/**
 * The two builds the regression guard runs side by side. The earlier commit is built once in
 * a clone (git clone + npm ci + tsc) cached by its hash. Both builds run the *current* bench
 * server scripts (the earlier commit's may lack options such as `emit`): each gets a runner
 * directory with a copy of dist/bench/servers and a node_modules/webhook-tasks link to its
 * build, so `require("webhook-tasks")` in the same script loads one build or the other.
 */
export interface ResolvedRev {
  /** What was asked for, or how the default was chosen. */
  label: string;
  hash: string;
}

const git = (args: string[], cwd = REPO_ROOT) => execFileSync("git", args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();

/**
 * BENCH_AGAINST if set; else the merge-base with main when HEAD is on a branch that left it
 * (what this branch changed), else HEAD~1 (on main itself: what the last commit or merge did).
 */
export function resolveRev(spec: string | undefined): ResolvedRev {
  const commit = (rev: string) => {
    try {
      return git(["rev-parse", "--verify", "--quiet", `${rev}^{commit}`]);
    } catch {
      throw new Error(`"${rev}" is not a commit of this repository (BENCH_AGAINST takes any git revision: a hash, a branch, HEAD~2)`);
    }
  };
  if (spec !== undefined && spec !== "") return { label: spec, hash: commit(spec) };
  const head = commit("HEAD");
  let base: string | undefined;
  try {
    base = git(["merge-base", "HEAD", "main"]);
  } catch {
    base = undefined; // no branch called main here
  }
  if (base !== undefined && base !== head) return { label: `merge-base with main (${base.slice(0, 7)})`, hash: base };
  return { label: `HEAD~1 (${commit("HEAD~1").slice(0, 7)})`, hash: commit("HEAD~1") };
}

/** The earlier build's root (a clone with node_modules and dist/src), built on first use. */
export function buildAt(hash: string, cacheDir: string, log: (line: string) => void): string {
  const dir = join(cacheDir, hash);
  const marker = join(dir, ".bench-guard-built");
  if (existsSync(marker)) {
    log(`earlier build ${hash.slice(0, 7)}: cached in ${dir}`);
    return dir;
  }
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(cacheDir, { recursive: true });
  log(`earlier build ${hash.slice(0, 7)}: cloning, npm ci and tsc in ${dir} (once per commit)`);
  git(["clone", "--quiet", "--no-checkout", REPO_ROOT, dir]);
  git(["checkout", "--quiet", "--detach", hash], dir);
  const run = (command: string, args: string[]) => execFileSync(command, args, { cwd: dir, stdio: ["ignore", "ignore", "inherit"] });
  // npm ci runs the package's prepare script, which compiles dist/src; tsc again if it did not.
  run("npm", ["ci", "--no-audit", "--no-fund", "--prefer-offline"]);
  if (!existsSync(join(dir, "dist", "src", "index.js"))) {
    const project = existsSync(join(dir, "tsconfig.build.json")) ? "tsconfig.build.json" : "tsconfig.json";
    run(process.execPath, [join(dir, "node_modules", "typescript", "bin", "tsc"), "-p", project]);
  }
  if (!existsSync(join(dir, "dist", "src", "index.js"))) throw new Error(`earlier build ${hash}: no dist/src/index.js after npm ci and tsc`);
  writeFileSync(marker, `${new Date().toISOString()}\n`);
  return dir;
}

/** A directory holding the current bench servers, resolving `webhook-tasks` to `buildRoot`. */
export function runnerFor(name: string, buildRoot: string, parentDir: string): string {
  const dir = join(parentDir, name);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(join(dir, "node_modules"), { recursive: true });
  // Its own package.json ends the package scope here, so the scripts do not self-reference this repo.
  writeFileSync(join(dir, "package.json"), `${JSON.stringify({ name: `bench-guard-${name}`, private: true })}\n`);
  symlinkSync(buildRoot, join(dir, "node_modules", "webhook-tasks"), "dir");
  cpSync(join(REPO_ROOT, "dist", "bench", "servers"), join(dir, "servers"), { recursive: true, filter: (src) => !src.endsWith(".map") && !src.endsWith(".d.ts") });
  return join(dir, "servers");
}
