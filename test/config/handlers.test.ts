import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { loadApp } from "../../src/config/index";
import { silentLogger, type CoreApp } from "../../src/index";
import { CJS_HANDLERS, configIssues, FIXTURES, issueAt, useTempDir, worker } from "./yaml-helpers";

describe("YAML loading: handler references", () => {
  const tmp = useTempDir();
  const apps: CoreApp[] = [];
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((a) => a.stop({ timeoutMs: 1000 })));
  });
  const withRefs = (...refs: string[]) =>
    worker(
      refs.map((_, i) => `  h${i}: {type: webhook, path: /h${i}, port: 0}`).join("\n"),
      refs.map((ref, i) => `  - {name: t${i}, source: h${i}, handler: {ref: "${ref}"}}`).join("\n"),
    );

  it("loads CommonJS and ES module handlers, relative to the YAML file", async () => {
    const app = await loadApp(join(FIXTURES, "worker.yaml"), { logger: silentLogger });
    expect(app.tasks.map((t) => t.name)).to.deep.equal(["receive", "consume", "esm"]);
  });

  it("accepts an absolute module path, a default export, and a module path without extension", async () => {
    const file = tmp.write("refs.yaml", withRefs(`${CJS_HANDLERS}:receive`, `${join(FIXTURES, "handlers.mjs")}:default`, `${join(FIXTURES, "handlers")}.cjs:consume`));
    const app = await loadApp(file, { logger: silentLogger });
    expect(app.tasks).to.have.length(3);
    writeFileSync(join(tmp.dir(), "local.js"), "exports.go = async () => 1;\n");
    const local = await loadApp(tmp.write("local.yaml", withRefs("./local:go", "local.js:go")), { logger: silentLogger });
    expect(local.tasks).to.have.length(2);
  });

  it("resolves a package name from the YAML file's directory", async () => {
    const pkg = join(tmp.dir(), "node_modules", "my-handlers");
    mkdirSync(pkg, { recursive: true });
    writeFileSync(join(pkg, "package.json"), JSON.stringify({ name: "my-handlers", main: "index.js" }));
    writeFileSync(join(pkg, "index.js"), "exports.handle = async () => 'pkg';\n");
    const app = await loadApp(tmp.write("pkg.yaml", withRefs("my-handlers:handle")), { logger: silentLogger });
    expect(app.tasks).to.have.length(1);
  });

  it("refuses a module that cannot be found, naming the key path and line", async () => {
    const file = tmp.write("nomod.yaml", withRefs("./nope.js:handle", "no-such-package:handle"));
    const issues = await configIssues(loadApp(file, { logger: silentLogger }));
    const issue = issueAt(issues, "tasks[0].handler.ref");
    expect(issue.message).to.match(/^cannot find module "\.\/nope\.js"/);
    expect(issue.line).to.equal(6);
    expect(issueAt(issues, "tasks[1].handler.ref").message).to.match(/cannot find module "no-such-package"/);
  });

  it("refuses an export that does not exist, listing what the module exports", async () => {
    const issues = await configIssues(loadApp(tmp.write("noexp.yaml", withRefs(`${CJS_HANDLERS}:recieve`)), { logger: silentLogger }));
    const issue = issueAt(issues, "tasks[0].handler.ref");
    expect(issue.message).to.match(/has no export "recieve"/).and.match(/it exports: .*receive/);
  });

  it("refuses an export that is not a function, or is a class", async () => {
    const issues = await configIssues(loadApp(tmp.write("notfn.yaml", withRefs(`${CJS_HANDLERS}:notAFunction`, `${CJS_HANDLERS}:SomeClass`)), { logger: silentLogger }));
    expect(issueAt(issues, "tasks[0].handler.ref").message).to.match(/is a number, not a function/);
    expect(issueAt(issues, "tasks[1].handler.ref").message).to.match(/is a class/);
  });

  it("refuses a module that throws while loading, with its message", async () => {
    const issues = await configIssues(loadApp(tmp.write("throws.yaml", withRefs(`${join(FIXTURES, "throws-on-load.cjs")}:x`)), { logger: silentLogger }));
    expect(issueAt(issues, "tasks[0].handler.ref").message).to.match(/cannot load module .*this module is broken/);
  });

  // Node 20 says only "Unknown file extension .ts"; a user who wrote handlers in TypeScript needs the next step.
  it("a TypeScript handler file: the refusal says to compile it and reference the .js", async function () {
    writeFileSync(join(tmp.dir(), "hooks.ts"), "export const go = async (ctx: unknown): Promise<number> => 1;\n");
    const file = tmp.write("ts.yaml", withRefs("./hooks.ts:go"));
    const loaded = await loadApp(file, { logger: silentLogger }).then(
      (app) => apps.push(app),
      (error: unknown) => error,
    );
    if (typeof loaded === "number") this.skip(); // a Node that strips types loads it
    const issues = await configIssues(Promise.reject(loaded));
    expect(issueAt(issues, "tasks[0].handler.ref").message).to.match(
      /^cannot load module "\.\/hooks\.ts" .*\(a TypeScript file: compile it with tsc and reference the \.js file it gives\)$/,
    );
  });

  it("reports handler problems together with the file's other problems", async () => {
    const file = tmp.write("both.yaml", worker("  h0: {type: webhook, path: /h0, port: x}", '  - {name: t0, source: h0, handler: {ref: "./missing.js:f"}}'));
    const issues = await configIssues(loadApp(file, { logger: silentLogger }));
    expect(issues.map((i) => i.path)).to.include.members(["resources.h0.port", "tasks[0].handler.ref"]);
  });
});
