import { execFile } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { promisify } from "node:util";
import { readmeInstallCommands, readmeTsconfig } from "../helpers/readme";

const ROOT = join(__dirname, "../../..");
const run = promisify(execFile);
export const NPM_FLAGS = ["--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error"];

/** The package packed with `npm pack` and installed as the README says, once per test run. */
export interface InstalledPackage {
  /** The run's scratch directory (removed when the process exits). */
  readonly work: string;
  readonly tarball: string;
  /** What `npm pack` put in the tarball. */
  readonly packedFiles: readonly string[];
  /** The project the README's install commands ran in; its node_modules is shared by `project()`. */
  readonly installed: string;
  /**
   * A new project directory under `parent` (default: the scratch directory): the README's
   * tsconfig.json (plus preserveSymlinks, or with `compilerOptions` changed), the installed node_modules, an
   * empty src/.
   */
  project(name: string, options?: { compilerOptions?: Record<string, unknown>; parent?: string }): string;
  /** `tsc -p dir` with the installed TypeScript; resolves to its diagnostics, "" when clean. */
  tsc(dir: string): Promise<string>;
}

let once: Promise<InstalledPackage> | undefined;

/**
 * Shared by the tests that need what a user gets (the package-install test, the docs test):
 * packing and installing take most of a minute, so they happen once per mocha run.
 */
export function installedPackage(): Promise<InstalledPackage> {
  once ??= setUp();
  return once;
}

/** Exact versions of what this checkout has installed, so installs do not depend on the registry's latest. */
export function pinned(name: string): string {
  if (name.includes("@", 1)) return name;
  try {
    const { version } = JSON.parse(readFileSync(join(ROOT, "node_modules", name, "package.json"), "utf8")) as { version: string };
    return `${name}@${version}`;
  } catch {
    return name;
  }
}

async function setUp(): Promise<InstalledPackage> {
  const work = mkdtempSync(join(tmpdir(), "webhook-tasks-installed-"));
  process.on("exit", () => rmSync(work, { recursive: true, force: true }));

  // Packed from a copy, so the build that `prepare` runs does not touch this checkout's dist/.
  const source = join(work, "source");
  mkdirSync(source);
  for (const entry of ["package.json", "README.md", "LICENSE", "docs", "src", "tsconfig.json", "tsconfig.build.json"]) cpSync(join(ROOT, entry), join(source, entry), { recursive: true });
  symlinkSync(join(ROOT, "node_modules"), join(source, "node_modules"), "dir");
  const { stdout } = await run("npm", ["pack", "--json", "--pack-destination", work, ...NPM_FLAGS], { cwd: source });
  const [packed] = JSON.parse(stdout) as Array<{ filename: string; files: Array<{ path: string }> }>;
  const tarball = join(work, packed.filename);

  // The README's install commands, in order, in a new project; the tarball line names the file npm pack made.
  const installed = join(work, "installed");
  mkdirSync(installed);
  writeFileSync(join(installed, "package.json"), JSON.stringify({ name: "consumer", version: "1.0.0", private: true }, null, 2));
  const commands = readmeInstallCommands();
  if (!commands.some((args) => args.some((a) => a.endsWith(".tgz")))) throw new Error("README.md: no `npm install <file>.tgz` line under ## Install");
  for (const args of commands) {
    const resolved = args.map((arg) => {
      if (!arg.endsWith(".tgz")) return arg.startsWith("-") ? arg : pinned(arg);
      if (basename(arg) !== packed.filename) throw new Error(`README.md installs ${arg}, npm pack makes ${packed.filename}`);
      return tarball;
    });
    await run("npm", ["install", ...resolved, ...NPM_FLAGS], { cwd: installed });
  }

  const tsc = join(installed, "node_modules/.bin/tsc");
  return {
    work,
    tarball,
    packedFiles: packed.files.map((f) => f.path),
    installed,
    project(name, options = {}) {
      const dir = join(options.parent ?? work, name);
      mkdirSync(join(dir, "src"), { recursive: true });
      symlinkSync(join(installed, "node_modules"), join(dir, "node_modules"), "dir");
      const tsconfig = readmeTsconfig();
      // node_modules here is a link to the shared install: without preserveSymlinks, the package's
      // own type imports (optional peers such as @octokit/openapi-webhooks-types) would be looked up
      // from the link's target and never find what a test installed beside the project, as they
      // would in a user's single node_modules.
      const compilerOptions = { ...tsconfig.compilerOptions, preserveSymlinks: true, ...options.compilerOptions };
      writeFileSync(join(dir, "tsconfig.json"), JSON.stringify({ ...tsconfig, compilerOptions }, null, 2));
      return dir;
    },
    async tsc(dir) {
      return run(tsc, ["-p", dir], { cwd: dir }).then(
        (r) => r.stdout,
        (error: { stdout?: string; message: string }) => error.stdout || error.message,
      );
    },
  };
}
