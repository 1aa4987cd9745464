import { execFile } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { expect } from "chai";
import { installedPackage, NPM_FLAGS, pinned, type InstalledPackage } from "./installed-package";

const ROOT = join(__dirname, "../../..");
const run = promisify(execFile);

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

describe("the package, packed and installed into a fresh project as the README says", function () {
  this.timeout(300_000);
  let pkg: InstalledPackage;

  before(async () => {
    pkg = await installedPackage();
  });

  it("npm pack builds it (prepare), ships dist/src without source maps, README, LICENSE and docs", () => {
    const files = pkg.packedFiles;
    expect(files).to.include.members(["package.json", "README.md", "LICENSE", "dist/src/index.js", "dist/src/index.d.ts", "dist/src/testing/index.js", "dist/src/testing/index.d.ts", "dist/src/cli/main.js"]);
    expect(files.some((f) => f.startsWith("docs/") && f.endsWith(".md"))).to.equal(true);
    expect(files, "the console's script and stylesheet").to.include.members(["dist/src/console/assets/console.js", "dist/src/console/assets/console.css"]);
    expect(files.filter((f) => f.endsWith(".map")), "source maps would point at files not shipped").to.deep.equal([]);
    expect(files.filter((f) => !/^(dist\/src\/|docs\/|package\.json$|README\.md$|LICENSE$)/.test(f))).to.deep.equal([]);
    const index = readFileSync(join(pkg.installed, "node_modules/webhook-tasks/dist/src/index.js"), "utf8");
    expect(index).not.to.contain("sourceMappingURL");
  });

  it("with the README's install commands and tsconfig.json, a strict app with decorators, the function form and the testing kit compiles, runs and answers 202", async () => {
    const project = pkg.project("consumer");
    writeFileSync(join(project, "src", "main.ts"), CONSUMER_APP);
    expect(await pkg.tsc(project), "tsc reported errors").to.equal("");
    const { stdout } = await run(process.execPath, [join(project, "dist/main.js")], { cwd: project });
    expect(stdout).to.contain("STATUS 202").and.contain("TASK RAN octo/repo").and.contain('KIT 202 {"repository":"octo/repo"}');

    // The CLI is installed as a bin, and the package loads from an ES module too.
    const cli = await run(join(project, "node_modules/.bin/webhook-tasks"), ["--version"], { cwd: project });
    expect(cli.stdout.trim()).to.equal((JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string }).version);
    writeFileSync(join(project, "esm.mjs"), 'import { CoreApp, Queue } from "webhook-tasks";\nimport { signRequest } from "webhook-tasks/testing";\nconsole.log(typeof CoreApp, new Queue("q").name, Object.keys(signRequest("github", { secret: "s", body: "" })).join());\n');
    const esm = await run(process.execPath, [join(project, "esm.mjs")], { cwd: project });
    expect(esm.stdout.trim()).to.equal("function q x-hub-signature-256");
  });

  it("the installed package serves the web console with its script and stylesheet", async () => {
    const project = pkg.project("console");
    writeFileSync(join(project, "src", "main.ts"), CONSOLE_APP);
    expect(await pkg.tsc(project), "tsc reported errors").to.equal("");
    const { stdout } = await run(process.execPath, [join(project, "dist/main.js")], { cwd: project });
    expect(stdout).to.contain("PAGE 200").and.contain("ASSETS 200 200");
  });

  it("with experimentalDecorators and without emitDecoratorMetadata (as esbuild-based runners compile), the decorators work the same", async () => {
    const project = pkg.project("consumer-legacy", { compilerOptions: { experimentalDecorators: true, emitDecoratorMetadata: false } });
    writeFileSync(join(project, "src", "main.ts"), CONSUMER_APP);
    expect(await pkg.tsc(project), "tsc reported errors").to.equal("");
    const main = readFileSync(join(project, "dist/main.js"), "utf8");
    expect(main).to.contain("__decorate(").and.not.contain("design:paramtypes");
    const { stdout } = await run(process.execPath, [join(project, "dist/main.js")], { cwd: project });
    expect(stdout).to.contain("STATUS 202").and.contain("TASK RAN octo/repo");
  });

  it("event types: without the optional type packages any name compiles and bodies are unknown; installed, names and bodies are checked", async () => {
    const bare = pkg.project("events-without-types");
    writeFileSync(join(bare, "src", "events.ts"), EVENTS_WITHOUT_TYPES);
    expect(await pkg.tsc(bare), "without the packages").to.equal("");
    const strict = pkg.project("events-without-types-strict", { compilerOptions: { skipLibCheck: false } });
    writeFileSync(join(strict, "src", "events.ts"), EVENTS_WITHOUT_TYPES);
    expect(await pkg.tsc(strict), "skipLibCheck off names the missing packages").to.contain("Cannot find module '@octokit/openapi-webhooks-types'").and.contain("Cannot find module 'stripe'");

    // Installed beside the project (its parent's node_modules), so the shared install stays as the README makes it.
    const beside = join(pkg.work, "with-event-types");
    mkdirSync(beside, { recursive: true });
    writeFileSync(join(beside, "package.json"), "{}");
    await run("npm", ["install", pinned("@octokit/openapi-webhooks-types"), pinned("stripe"), ...NPM_FLAGS], { cwd: beside });
    const typed = pkg.project("events", { parent: beside });
    writeFileSync(join(typed, "src", "events.ts"), EVENTS_WITH_TYPES);
    expect(await pkg.tsc(typed), "with the packages").to.equal("");
  });
});

/** An app with the console on, as a user writes it: the page and both assets answer from the installed package. */
const CONSOLE_APP = `import { CoreApp, WebhookSource } from "webhook-tasks";

const token = "an-installed-console-token";

async function main(): Promise<void> {
  const app = new CoreApp("consoled", { store: "memory", logLevel: "warn", console: { port: 0, auth: { token } } });
  app.task({ source: new WebhookSource({ path: "/hook", port: 0 }), name: "hook" }, async () => undefined);
  await app.start();
  const page = await fetch(app.consoleUrl!, { headers: { authorization: \`Bearer \${token}\` } });
  const html = await page.text();
  console.log(\`PAGE \${page.status}\`);
  const assets = [...html.matchAll(/(?:src|href)="([^"]+\\.(?:css|js))"/g)].map((m) => m[1]);
  const statuses = await Promise.all(assets.map(async (path) => (await fetch(new URL(path, app.consoleUrl!))).status));
  console.log(\`ASSETS \${statuses.join(" ")}\`);
  await app.stop();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
`;

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
