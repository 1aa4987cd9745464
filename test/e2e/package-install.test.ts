import { execFile } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { expect } from "chai";

const ROOT = join(__dirname, "../../..");
const run = promisify(execFile);
const NPM_FLAGS = ["--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error"];

/** The tsconfig the README recommends, as JSON. */
export const RECOMMENDED_TSCONFIG = {
  compilerOptions: {
    target: "ES2022",
    module: "nodenext",
    moduleResolution: "nodenext",
    strict: true,
    experimentalDecorators: true,
    esModuleInterop: true,
    skipLibCheck: true,
    types: ["node"],
    rootDir: "src",
    outDir: "dist",
  },
  include: ["src"],
};

/** A user's app: decorators and the function form, a typed queue, the testing kit. */
const CONSUMER_APP = `import { createApp, GitHubSignature, Module, Queue, Task, WebhookSource, type TaskContext, type WebhookEvent } from "webhook-tasks";
import { signRequest, testApp } from "webhook-tasks/testing";

interface Push {
  repository: string;
}

const pushes = new Queue<Push>("pushes");
const github = new WebhookSource({ path: "/hooks/github", port: 0, auth: new GitHubSignature("s3cret") });

class GitHubHandlers {
  @Task({ source: github, emit: pushes })
  async summarise(ctx: TaskContext, event: WebhookEvent<{ repository: { full_name: string } }>): Promise<Push> {
    return { repository: event.body.repository.full_name };
  }
}

@Module({ name: "consumer", handlers: [GitHubHandlers], store: "memory", logLevel: "warn" })
class AppModule {}

function build(onPush: (push: Push) => void) {
  const app = createApp(AppModule);
  app.task({ source: pushes }, async (ctx, push) => onPush(push));
  return app;
}

async function main(): Promise<void> {
  const body = JSON.stringify({ repository: { full_name: "octo/repo" } });
  const headers = { "content-type": "application/json", ...signRequest("github", { secret: "s3cret", body }) };

  let ran!: (push: Push) => void;
  const pushed = new Promise<Push>((resolve) => (ran = resolve));
  const app = await build((push) => ran(push)).start();
  const res = await fetch(github.url, { method: "POST", headers, body });
  console.log(\`STATUS \${res.status}\`);
  console.log(\`TASK RAN \${(await pushed).repository}\`);
  await app.stop();

  const t = await testApp(build(() => undefined));
  const result = await t.send(github, { body, headers });
  console.log(\`KIT \${result.status} \${JSON.stringify(result.emitted)}\`);
  await t.stop();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
`;

describe("the package, packed and installed into a fresh project", function () {
  this.timeout(300_000);
  let work: string;

  before(() => {
    work = mkdtempSync(join(tmpdir(), "webhook-tasks-install-"));
  });
  after(() => rmSync(work, { recursive: true, force: true }));

  it("npm pack builds it (prepare), ships dist/src without source maps, README, LICENSE and docs", async () => {
    // Packed from a copy, so the build that `prepare` runs does not touch this checkout's dist/.
    const source = join(work, "source");
    mkdirSync(source);
    for (const entry of ["package.json", "README.md", "LICENSE", "docs", "src", "tsconfig.json", "tsconfig.build.json"]) cpSync(join(ROOT, entry), join(source, entry), { recursive: true });
    symlinkSync(join(ROOT, "node_modules"), join(source, "node_modules"), "dir");
    const { stdout } = await run("npm", ["pack", "--json", "--pack-destination", work, ...NPM_FLAGS], { cwd: source });
    const [packed] = JSON.parse(stdout) as Array<{ filename: string; files: Array<{ path: string }> }>;
    const files = packed.files.map((f) => f.path);
    expect(files).to.include.members(["package.json", "README.md", "LICENSE", "dist/src/index.js", "dist/src/index.d.ts", "dist/src/testing/index.js", "dist/src/testing/index.d.ts", "dist/src/cli/main.js"]);
    expect(files.some((f) => f.startsWith("docs/") && f.endsWith(".md"))).to.equal(true);
    expect(files.filter((f) => f.endsWith(".map")), "source maps would point at files not shipped").to.deep.equal([]);
    expect(files.filter((f) => !/^(dist\/src\/|docs\/|package\.json$|README\.md$|LICENSE$)/.test(f))).to.deep.equal([]);
    const index = readFileSync(join(source, "dist/src/index.js"), "utf8");
    expect(index).not.to.contain("sourceMappingURL");
    writeFileSync(join(work, "tarball"), join(work, packed.filename));
  });

  it("installs with TypeScript into a new project; a strict app with decorators, the function form and the testing kit compiles, runs and answers 202", async () => {
    const tarball = readFileSync(join(work, "tarball"), "utf8");
    const project = join(work, "consumer");
    mkdirSync(join(project, "src"), { recursive: true });
    writeFileSync(join(project, "package.json"), JSON.stringify({ name: "consumer", version: "1.0.0", private: true }, null, 2));
    writeFileSync(join(project, "tsconfig.json"), JSON.stringify(RECOMMENDED_TSCONFIG, null, 2));
    writeFileSync(join(project, "src", "main.ts"), CONSUMER_APP);
    const ts = (JSON.parse(readFileSync(join(ROOT, "node_modules/typescript/package.json"), "utf8")) as { version: string }).version;
    const types = (JSON.parse(readFileSync(join(ROOT, "node_modules/@types/node/package.json"), "utf8")) as { version: string }).version;
    await run("npm", ["install", tarball, `typescript@${ts}`, `@types/node@${types}`, ...NPM_FLAGS], { cwd: project });

    const tsc = await run(join(project, "node_modules/.bin/tsc"), ["-p", "."], { cwd: project }).catch((e: { stdout: string }) => e);
    expect("stdout" in tsc ? tsc.stdout : "", "tsc reported errors").to.equal("");
    const { stdout } = await run(process.execPath, [join(project, "dist/main.js")], { cwd: project });
    expect(stdout).to.contain("STATUS 202").and.contain("TASK RAN octo/repo").and.contain('KIT 202 {"repository":"octo/repo"}');

    // The CLI is installed as a bin, and the package loads from an ES module too.
    const cli = await run(join(project, "node_modules/.bin/webhook-tasks"), ["--version"], { cwd: project });
    expect(cli.stdout.trim()).to.equal((JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string }).version);
    writeFileSync(join(project, "esm.mjs"), 'import { CoreApp, Queue } from "webhook-tasks";\nimport { signRequest } from "webhook-tasks/testing";\nconsole.log(typeof CoreApp, new Queue("q").name, Object.keys(signRequest("github", { secret: "s", body: "" })).join());\n');
    const esm = await run(process.execPath, [join(project, "esm.mjs")], { cwd: project });
    expect(esm.stdout.trim()).to.equal("function q x-hub-signature-256");
  });

  it("without emitDecoratorMetadata (as esbuild-based runners compile) the decorators work the same", async () => {
    const project = join(work, "consumer");
    writeFileSync(join(project, "tsconfig.json"), JSON.stringify({ ...RECOMMENDED_TSCONFIG, compilerOptions: { ...RECOMMENDED_TSCONFIG.compilerOptions, emitDecoratorMetadata: false } }, null, 2));
    rmSync(join(project, "dist"), { recursive: true, force: true });
    await run(join(project, "node_modules/.bin/tsc"), ["-p", "."], { cwd: project });
    expect(readFileSync(join(project, "dist/main.js"), "utf8")).not.to.contain("design:paramtypes");
    const { stdout } = await run(process.execPath, [join(project, "dist/main.js")], { cwd: project });
    expect(stdout).to.contain("STATUS 202").and.contain("TASK RAN octo/repo");
  });

  it("event types: without the optional type packages any name compiles and bodies are unknown; installed, names and bodies are checked", async () => {
    const project = join(work, "consumer");
    const tsc = () => run(join(project, "node_modules/.bin/tsc"), ["-p", "."], { cwd: project }).then(() => "", (e: { stdout: string }) => e.stdout);
    writeFileSync(join(project, "tsconfig.json"), JSON.stringify(RECOMMENDED_TSCONFIG, null, 2));
    writeFileSync(join(project, "src", "events.ts"), EVENTS_WITHOUT_TYPES);
    expect(await tsc(), "without the packages").to.equal("");
    writeFileSync(join(project, "tsconfig.json"), JSON.stringify({ ...RECOMMENDED_TSCONFIG, compilerOptions: { ...RECOMMENDED_TSCONFIG.compilerOptions, skipLibCheck: false } }, null, 2));
    expect(await tsc(), "skipLibCheck off names the missing packages").to.contain("Cannot find module '@octokit/openapi-webhooks-types'").and.contain("Cannot find module 'stripe'");

    const version = (name: string) => (JSON.parse(readFileSync(join(ROOT, "node_modules", name, "package.json"), "utf8")) as { version: string }).version;
    await run("npm", ["install", `@octokit/openapi-webhooks-types@${version("@octokit/openapi-webhooks-types")}`, `stripe@${version("stripe")}`, ...NPM_FLAGS], { cwd: project });
    writeFileSync(join(project, "tsconfig.json"), JSON.stringify(RECOMMENDED_TSCONFIG, null, 2));
    writeFileSync(join(project, "src", "events.ts"), EVENTS_WITH_TYPES);
    expect(await tsc(), "with the packages").to.equal("");
  });
});

/** Without the type packages: names are not checked, and bodies are unknown (not any). */
const EVENTS_WITHOUT_TYPES = `import { CoreApp, GitHubSignature, StripeSignature, WebhookSource } from "webhook-tasks";
const app = new CoreApp("events", { store: "memory" });
const github = new WebhookSource({ path: "/gh", port: 0, auth: new GitHubSignature("s") });
const stripe = new WebhookSource({ path: "/st", port: 0, auth: new StripeSignature("s") });
app.task({ source: github, on: "pull_request.anything" }, async (ctx, event) => {
  // @ts-expect-error the body is unknown
  event.body.number;
  return event.name.length;
});
app.task({ source: stripe, on: "invoice.*" }, async (ctx, event) => {
  // @ts-expect-error the body is unknown
  event.body.data;
});
`;

/** With them: the body is the named event's payload, and a misspelt name does not compile. */
const EVENTS_WITH_TYPES = `import { CoreApp, GitHubSignature, StripeSignature, WebhookSource } from "webhook-tasks";
const app = new CoreApp("events", { store: "memory" });
const github = new WebhookSource({ path: "/gh", port: 0, auth: new GitHubSignature("s") });
const stripe = new WebhookSource({ path: "/st", port: 0, auth: new StripeSignature("s") });
app.task({ source: github, on: "pull_request.opened" }, async (ctx, event) => event.body.pull_request.title);
// @ts-expect-error not a GitHub event
app.task({ source: github, on: "pull_request.anything" }, async () => undefined);
app.task({ source: stripe, on: "invoice.paid" }, async (ctx, event) => event.body.data.object.amount_paid);
`;
