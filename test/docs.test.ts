import { execFile, spawn } from "node:child_process";
import { once } from "node:events";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { promisify } from "node:util";
import { expect } from "chai";
import { parseAllDocuments, parse as parseYaml } from "yaml";
import { USAGE } from "../src/cli/usage";
import { ConfigError, loadApp, silentLogger } from "../src/index";
import { installedPackage, NPM_FLAGS, pinned } from "./e2e/installed-package";

const ROOT = resolve(__dirname, "../..");

/**
 * Pages other branches add (linked from the README and docs/README.md before they arrive).
 * Empty this list once they are merged: from then on a missing page fails the test.
 */
export const PENDING_DOCS: readonly string[] = [];

/** README.md and every docs/*.md, relative to the root. */
function pages(): string[] {
  return ["README.md", ...readdirSync(join(ROOT, "docs")).filter((f) => f.endsWith(".md")).sort().map((f) => `docs/${f}`)];
}

/**
 * How the fenced blocks of README.md and docs/*.md are checked:
 *
 * - ```ts: compiled, each as a module of its own, in one strict tsc run, in a project made only
 *   from what the README tells a user: the package packed by npm pack and installed with the
 *   README's install commands, and the README's tsconfig.json verbatim (test/e2e/installed-package.ts,
 *   shared with the package-install test, once per run). A page whose examples import more
 *   says so in an `npm install ...` line of its own (in an sh block): those packages are
 *   installed beside the project, never into it.
 * - ```yaml: a whole worker file, loaded and validated as `webhook-tasks check` does (schema,
 *   ${ENV} variables, handler modules and exports, routes). Every ${NAME} it uses is given a
 *   placeholder value, and every `handler.ref` a stub module exporting that function.
 * - A second word after the language marks a block that is not a whole file on purpose:
 *   ```ts fragment (a piece of code out of context) is not compiled; ```yaml fragment (a few
 *   keys of a worker file), ```yaml kubernetes and ```yaml compose (not worker files) are only
 *   parsed as YAML (repeated keys allowed, for blocks that list alternatives).
 * - A block whose line above (after a blank line) is `samples/x.ts`: must equal that file; the
 *   sample files (all of samples/, as they import each other) compile in the same project.
 */
interface Block {
  readonly page: string;
  /** Line of the block's first code line in its page. */
  readonly line: number;
  readonly lang: string;
  /** The words after the language, e.g. "fragment"; "" when none. */
  readonly mark: string;
  readonly code: string;
  /** "samples/x.ts" when the line before the block (after a blank line) names that file. */
  readonly sample: string | undefined;
}

function blocksOf(page: string): Block[] {
  const lines = readFileSync(join(ROOT, page), "utf8").split("\n");
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\w*)(?:[ \t]+(\S[^`]*?))?\s*$/.exec(lines[i]);
    if (!open) continue;
    const start = i + 1;
    let end = start;
    while (end < lines.length && lines[end] !== "```") end++;
    const named = i >= 2 && lines[i - 1] === "" ? /^`(samples\/[^`]+)`(?: \([^)]*\))?:$/.exec(lines[i - 2]) : null;
    blocks.push({ page, line: start + 1, lang: open[1], mark: open[2] ?? "", code: lines.slice(start, end).join("\n") + "\n", sample: named?.[1] });
    i = end;
  }
  return blocks;
}

/** GitHub's anchor for a heading. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

function anchorsOf(page: string): Set<string> {
  const text = readFileSync(join(ROOT, page), "utf8").replace(/^```[\s\S]*?^```$/gm, "");
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const match of text.matchAll(/^#{1,6} (.+)$/gm)) {
    const base = slug(match[1]);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

/** Packages the docs pages (not the README: its commands make the project) tell users to `npm install`. */
function docsInstallPackages(): string[] {
  const lines = pages()
    .filter((p) => p !== "README.md")
    .flatMap(blocksOf)
    .filter((b) => b.lang === "sh")
    .flatMap((b) => b.code.split("\n"))
    .flatMap((l) => l.replace(/\s+#.*$/, "").split("&&"))
    .map((l) => l.trim())
    .filter((l) => /^npm install /.test(l));
  return [...new Set(lines.flatMap((l) => l.split(/\s+/).slice(2).filter((a) => !a.startsWith("-"))))];
}

/** A value a check would accept for a ${NAME} of a docs example. */
function placeholderFor(name: string): string {
  if (/PORT$/.test(name)) return "8080";
  if (/DATABASE_URL|STORE$/.test(name)) return "postgres://app@127.0.0.1:5432/app";
  return "placeholder-c2VjcmV0"; // no spaces, and valid where base64 is expected after a prefix
}

/** Writes a module beside the YAML file for every `handler.ref` it names, exporting that function. */
function stubHandlers(code: string, dir: string): void {
  const doc = parseYaml(code) as { tasks?: Array<{ handler?: { ref?: unknown } }> } | null;
  const exports = new Map<string, Set<string>>();
  for (const task of doc?.tasks ?? []) {
    const ref = task.handler?.ref;
    if (typeof ref !== "string" || !ref.includes(":")) continue;
    const at = ref.lastIndexOf(":");
    const names = exports.get(ref.slice(0, at)) ?? new Set<string>();
    exports.set(ref.slice(0, at), names.add(ref.slice(at + 1)));
  }
  for (const [module, names] of exports) {
    const file = join(dir, module);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, [...names].map((n) => `exports[${JSON.stringify(n)}] = async () => undefined;\n`).join(""));
  }
}

describe("docs: README.md and docs/*.md", () => {
  it("every ```ts block compiles as a module of its own (strict, one tsc run) in a project made only from the README's install commands and tsconfig.json", async function () {
    this.timeout(300_000);
    const blocks = pages().flatMap(blocksOf).filter((b) => b.lang === "ts" && b.sample === undefined && b.mark === "");
    expect(blocks.length).to.be.greaterThan(10);
    const pkg = await installedPackage();
    // Packages the docs pages tell users to install for their examples: beside the project, so
    // that the README's own install commands alone must be enough for everything else.
    const beside = join(pkg.work, "docs-extras");
    mkdirSync(beside, { recursive: true });
    const extras = docsInstallPackages();
    if (extras.length > 0) {
      writeFileSync(join(beside, "package.json"), JSON.stringify({ name: "docs-extras", version: "1.0.0", private: true }));
      await promisify(execFile)("npm", ["install", ...extras.map(pinned), ...NPM_FLAGS], { cwd: beside });
    }
    const project = pkg.project(`docs-${process.pid}-${Date.now()}`, { parent: beside });
    const files = new Map<string, Block>();
    for (const block of blocks) {
      const name = `${block.page.replace(/[/.]/g, "_")}_${block.line}.ts`;
      const isModule = /^\s*(import|export)\s/m.test(block.code);
      writeFileSync(join(project, "src", name), isModule ? block.code : `${block.code}export {};\n`);
      files.set(name, block);
    }
    cpSync(join(ROOT, "samples"), join(project, "src", "samples"), { recursive: true, filter: (f) => !/\.(js|yaml|conf)$/.test(f) });
    const result = await pkg.tsc(project);
    // "src/README_md_120.ts(3,7): error TS2304: ..." -> "README.md:122: error TS2304: ..."
    const problems = result
      .split("\n")
      .filter((l) => l.trim() !== "")
      .map((l) => {
        const match = /^(?:src\/)?(\S+\.ts)\((\d+),(\d+)\): (.*)$/.exec(l);
        const block = match ? files.get(match[1]) : undefined;
        return block && match ? `${block.page}:${block.line + Number(match[2]) - 1}: ${match[4]}` : l;
      });
    expect(problems, `code blocks that do not compile:\n${problems.join("\n")}`).to.deep.equal([]);
  });

  it("every ```yaml block is a worker file that loads as `webhook-tasks check` validates it; marked ones at least parse", async () => {
    const blocks = pages().flatMap(blocksOf).filter((b) => b.lang === "yaml");
    expect(blocks.filter((b) => b.mark === "").length).to.be.greaterThan(3);
    expect(blocks.filter((b) => b.mark === "fragment").length).to.be.greaterThan(3);
    const unknownMarks = blocks.filter((b) => !["", "fragment", "kubernetes", "compose"].includes(b.mark));
    expect(unknownMarks.map((b) => `${b.page}:${b.line}: yaml ${b.mark}`)).to.deep.equal([]);
    const dir = mkdtempSync(join(tmpdir(), "webhook-tasks-docs-yaml-"));
    const problems: string[] = [];
    try {
      for (const block of blocks) {
        const where = `${block.page}:${block.line}`;
        if (block.mark !== "") {
          for (const doc of parseAllDocuments(block.code, { uniqueKeys: false })) {
            if ("errors" in doc) problems.push(...doc.errors.map((e) => `${where}: ${e.message}`));
          }
          continue;
        }
        // A directory per block: its stub handler modules are its own (require caches modules).
        const home = join(dir, `${block.page.replace(/[/.]/g, "_")}_${block.line}`);
        mkdirSync(home);
        const file = join(home, "worker.yaml");
        writeFileSync(file, block.code);
        stubHandlers(block.code, home);
        const env = Object.fromEntries([...block.code.matchAll(/\$\{(\w+)(?::-[^}]*)?\}/g)].map((m) => [m[1], placeholderFor(m[1])]));
        try {
          await loadApp(file, { logger: silentLogger }, { env });
        } catch (error) {
          // Told at the page's line: "docs/x.md:52: resources: is required".
          if (!(error instanceof ConfigError)) problems.push(`${where}: ${(error as Error).message}`);
          else problems.push(...error.issues.map((i) => `${block.page}:${block.line + (i.line ?? 1) - 1}: ${i.path === "" ? "" : `${i.path}: `}${i.message}`));
        }
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expect(problems, `yaml blocks that do not load:\n${problems.join("\n")}`).to.deep.equal([]);
  });

  it("every block that names a sample file is that file, byte for byte", () => {
    const named = pages().flatMap(blocksOf).filter((b) => b.sample !== undefined);
    expect(named.map((b) => b.sample)).to.include.members(["samples/readme/github-push.ts", "samples/readme/github-push.test.ts", "samples/app.module.ts", "samples/main.ts"]);
    for (const { page, line, sample, code } of named) {
      expect(existsSync(join(ROOT, sample!)), `${page}:${line}: ${sample} does not exist`).to.equal(true);
      expect(code, `${page}:${line} differs from ${sample}`).to.equal(readFileSync(join(ROOT, sample!), "utf8"));
    }
  });

  it("every relative link leads to a file (and a heading) that exists; only the pending pages may be missing", () => {
    const broken: string[] = [];
    for (const page of pages()) {
      const text = readFileSync(join(ROOT, page), "utf8").replace(/^```[\s\S]*?^```$/gm, "");
      for (const match of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = match[1];
        if (/^[a-z]+:/i.test(target)) continue;
        const [path, anchor] = target.split("#");
        const file = path === "" ? page : relative(ROOT, resolve(dirname(join(ROOT, page)), path));
        if (PENDING_DOCS.includes(file)) continue;
        if (!existsSync(join(ROOT, file))) broken.push(`${page}: ${target} (no ${file})`);
        else if (anchor !== undefined && file.endsWith(".md") && !anchorsOf(file).has(anchor)) broken.push(`${page}: ${target} (no heading #${anchor} in ${file})`);
      }
    }
    expect(broken).to.deep.equal([]);
  });

  it("the README and docs/README.md link every pending page, and name no process", () => {
    for (const index of ["README.md", "docs/README.md"]) {
      const text = readFileSync(join(ROOT, index), "utf8");
      for (const pending of PENDING_DOCS) expect(text, `${index} links ${pending}`).to.contain(`](${index === "README.md" ? pending : pending.replace("docs/", "")}`);
    }
    for (const page of pages()) {
      const text = readFileSync(join(ROOT, page), "utf8");
      for (const word of [/\bthe seed\b/i, /\bthe contract\b/i, /design card/i, /\bissue \d+/i, /\bthe spec\b/i]) {
        expect(text, `${page} says ${word}`).not.to.match(word);
      }
    }
    expect(readFileSync(join(ROOT, "README.md"), "utf8").split("\n").length).to.be.at.most(420);
  });

  it("the README, docs/README.md and docs/yaml-and-cli.md name every command of `webhook-tasks --help`", () => {
    const commands = [...new Set([...USAGE.matchAll(/^  ([a-z][a-z-]*) /gm)].map((m) => m[1]))];
    expect(commands).to.include.members(["run", "status", "send"]);
    const lists = {
      "README.md": /\*\*YAML and the CLI\.\*\*[^\n]*\n[^\n]*/,
      "README.md (documentation table)": /\| \[docs\/yaml-and-cli\.md\][^\n]*/,
      "docs/README.md": /\| \[yaml-and-cli\.md\][^\n]*/,
      "docs/yaml-and-cli.md": /The `webhook-tasks` command[^]*?\n\n/,
    };
    for (const [where, pattern] of Object.entries(lists)) {
      const text = readFileSync(join(ROOT, where.split(" ")[0]), "utf8");
      const list = pattern.exec(text)?.[0];
      expect(list, `${where}: the command list`).to.be.a("string");
      for (const command of commands) expect(list, `${where} lists ${command}`).to.contain(`\`${command}\``);
    }
  });

  it("no example gives a secret a silent fallback (`process.env.GH_SECRET ?? \"dev-secret\"`, `${GH_SECRET:-dev-secret}`)", () => {
    const samples = readdirSync(join(ROOT, "samples"), { recursive: true, encoding: "utf8" }).filter((f) => /\.(ts|js|yaml)$/.test(f)).map((f) => `samples/${f}`);
    const fallback = /process\.env(?:\.\w*(?:SECRET|TOKEN|KEY|PASSWORD)\w*|\[["'`]\w*(?:SECRET|TOKEN|KEY|PASSWORD)\w*["'`]\])\s*(?:\?\?|\|\|)|\$\{\w*(?:SECRET|TOKEN|KEY|PASSWORD)\w*:-(?!default\})/;
    const found = [...pages(), ...samples].flatMap((file) =>
      readFileSync(join(ROOT, file), "utf8")
        .split("\n")
        .flatMap((line, i) => (fallback.test(line) ? [`${file}:${i + 1}: ${line.trim()}`] : [])),
    );
    expect(found).to.deep.equal([]);
  });

  it("the README's first commands are the two that work on a fresh clone", () => {
    const readme = readFileSync(join(ROOT, "README.md"), "utf8");
    const first = blocksOf("README.md")[0];
    expect(first.lang).to.equal("sh");
    expect(first.code).to.match(/^npm ci && npm start\b/m).and.match(/^npm ci && npm test\b/m);
    expect(readme.indexOf("npm ci && npm start")).to.be.lessThan(1200);
  });

  it("the journal options example runs an app on that store", async () => {
    const example = require("../samples/readme/journal-options") as typeof import("../samples/readme/journal-options");
    const home = process.cwd();
    const cwd = mkdtempSync(join(tmpdir(), "docs-journal-"));
    process.chdir(cwd); // the example's ".data/orders" lands here
    try {
      await example.app.start();
      expect(example.app.store).to.equal(example.store);
      expect(example.store).to.include({ engine: "embedded", durable: true });
      await example.app.stop();
      expect(existsSync(join(cwd, ".data", "orders", "journal"))).to.equal(true);
    } finally {
      process.chdir(home);
      rmSync(cwd, { recursive: true, force: true });
    }
  });

  it("the quick start runs as written: the app starts, `webhook-tasks send` delivers a signed push, the task logs it", async function () {
    this.timeout(30_000);
    const dataDir = mkdtempSync(join(tmpdir(), "docs-quickstart-"));
    const app = spawn(process.execPath, [join(__dirname, "../samples/readme/github-push.js")], {
      env: { ...process.env, PORT: "0", GH_SECRET: "quickstart-secret", WEBHOOK_TASKS_DATA_DIR: dataDir, WEBHOOK_TASKS_LOG_LEVEL: "info" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    app.stdout.on("data", (c: Buffer) => (out += c.toString()));
    const logs = () => out.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l) as Record<string, unknown>);
    const waitFor = async (msg: string) => {
      const deadline = Date.now() + 10_000;
      for (;;) {
        const line = logs().find((l) => l.msg === msg);
        if (line) return line;
        if (Date.now() > deadline) throw new Error(`no "${msg}" log line; output:\n${out}`);
        await new Promise((r) => setTimeout(r, 25));
      }
    };
    try {
      const started = await waitFor("started");
      const origin = (started.listeners as string[])[0];
      const payload = join(dataDir, "push.json");
      writeFileSync(payload, JSON.stringify({ ref: "refs/heads/main", repository: { full_name: "octo/repo" }, commits: [{}, {}] }));
      const cli = join(__dirname, "../src/cli/main.js");
      const sent = await promisify(execFile)(
        process.execPath,
        [cli, "send", `${origin}/hooks/github`, "--preset", "github", "--secret-env", "GH_SECRET", "--file", payload, "--header", "x-github-event: push"],
        { env: { ...process.env, GH_SECRET: "quickstart-secret" } },
      );
      expect(sent.stdout).to.match(/^HTTP 202 Accepted/);
      const recorded = await waitFor("push recorded");
      expect(recorded).to.include({ repository: "octo/repo", branch: "main", commits: 2 });
    } finally {
      app.kill("SIGTERM");
      await once(app, "close");
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
