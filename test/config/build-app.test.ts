import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { appOptionsOf, buildApp, ConfigError, loadApp, loadConfig } from "../../src/config/index";
import { silentLogger, type CoreApp, type WebhookSource } from "../../src/index";
import { CJS_HANDLERS, configIssues, FIXTURES, issueAt, outLines, useTempDir, worker } from "./yaml-helpers";
import { until } from "../helpers/wait";

describe("YAML: building and running the app", () => {
  const tmp = useTempDir();
  const apps: CoreApp[] = [];
  const outFile = join(tmpdir(), `webhook-tasks-yaml-out-${process.pid}.jsonl`);
  beforeEach(() => {
    process.env.OUT_FILE = outFile;
  });
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((a) => a.stop({ timeoutMs: 1000 })));
    delete process.env.OUT_FILE;
    rmSync(outFile, { force: true });
  });

  it("runs the YAML app: webhook -> task -> emit queue -> second task, ESM handler, auth and custom response", async () => {
    const app = await loadApp(join(FIXTURES, "worker.yaml"), { logger: silentLogger });
    apps.push(app);
    expect(app.name).to.equal("yaml-worker");
    await app.start();
    const incoming = app.tasks.find((t) => t.name === "receive")!.source as WebhookSource;
    const esm = app.tasks.find((t) => t.name === "esm")!.source as WebhookSource;

    const refused = await fetch(incoming.url, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(refused.status).to.equal(401);

    const accepted = await fetch(incoming.url, {
      method: "PUT",
      headers: { "content-type": "application/json", authorization: "Bearer test-token" },
      body: JSON.stringify({ n: 1 }),
    });
    expect(accepted.status).to.equal(202);
    await until(() => outLines(outFile).some((l) => l.kind === "consume"));
    expect(outLines(outFile)).to.deep.include({ kind: "receive", value: { n: 1 } });
    expect(outLines(outFile)).to.deep.include({ kind: "consume", value: { got: { n: 1 }, task: "receive" } });

    const custom = await fetch(esm.url, { method: "POST", headers: { "content-type": "text/plain" }, body: "hi" });
    expect(custom.status).to.equal(200);
    expect(custom.headers.get("x-worker")).to.equal("yaml");
    expect(await custom.json()).to.deep.equal({ ok: true });
    await until(() => outLines(outFile).some((l) => l.kind === "esm"));
  });

  it("passes the app block to CoreApp, resolving dataDir from the YAML file's directory", async () => {
    const file = tmp.write("opts.yaml", worker("  hook: {type: webhook, path: /x}", `  - {name: t, source: hook, handler: {ref: "${CJS_HANDLERS}:receive"}}`, "app: {store: memory, dataDir: ./state, maxQueued: 5, http: {headersTimeoutMs: 100}}"));
    const config = await loadConfig(file);
    expect(appOptionsOf(config)).to.deep.equal({ store: "memory", dataDir: join(tmp.dir(), "state"), maxQueued: 5, http: { headersTimeoutMs: 100 } });
    const app = await buildApp(config, { logger: silentLogger });
    expect(app.tasks[0]).to.include({ name: "t", concurrency: 16 });
  });

  it("gives tasks their concurrency and retry settings", async () => {
    const app = await loadApp(join(FIXTURES, "worker.yaml"), { logger: silentLogger });
    const consume = app.tasks.find((t) => t.name === "consume")!;
    expect(consume.concurrency).to.equal(2);
    expect(consume.retry).to.deep.equal({ attempts: 3, initialDelayMs: 10, factor: 2, maxDelayMs: 100 });
  });

  it("refuses two webhooks on the same method, path and host:port, naming both", async () => {
    const file = tmp.write(
      "routes.yaml",
      worker(
        "  a: {type: webhook, path: /hooks, port: 9000}\n  b: {type: webhook, path: /hooks/, port: 9000, methods: [PUT, POST]}\n  c: {type: webhook, path: /hooks, port: 9001}\n  d: {type: webhook, path: /other, port: 9000}\n  e: {type: webhook, path: /other, port: 9000}",
        ["a", "b", "c", "d", "e"].map((n) => `  - {name: ${n}, source: ${n}, handler: {ref: "${CJS_HANDLERS}:receive"}}`).join("\n"),
      ),
    );
    const issues = await configIssues(loadApp(file, { logger: silentLogger }));
    expect(issues.map((i) => i.path)).to.deep.equal(["resources.b", "resources.e"]);
    expect(issueAt(issues, "resources.b").message).to.equal("duplicate route: POST /hooks on 127.0.0.1:9000 is claimed by resources.a too");
    expect(issueAt(issues, "resources.b").line).to.equal(4);
  });

  it("reports what WebhookSource and CoreApp themselves refuse under the key's path", async () => {
    const file = tmp.write("proxy.yaml", worker("  hook: {type: webhook, path: /x, trustProxy: [999.1.1.1]}", `  - {name: t, source: hook, handler: {ref: "${CJS_HANDLERS}:receive"}}`));
    const issues = await configIssues(loadApp(file, { logger: silentLogger }));
    expect(issueAt(issues, "resources.hook.trustProxy").message).to.match(/invalid IP address/);
    const misspelt = tmp.write("preset.yaml", worker("  hook: {type: webhook, path: /x, trustProxy: [lopback]}", `  - {name: t, source: hook, handler: {ref: "${CJS_HANDLERS}:receive"}}`));
    expect(issueAt(await configIssues(loadApp(misspelt, { logger: silentLogger })), "resources.hook.trustProxy").message).to.match(/invalid IP address: lopback \(did you mean "loopback"\?\)/);
    const app = tmp.write("app-proxy.yaml", worker("  hook: {type: webhook, path: /x}", `  - {name: t, source: hook, handler: {ref: "${CJS_HANDLERS}:receive"}}`, "app: {store: memory, trustProxy: not-an-address}"));
    expect(issueAt(await configIssues(loadApp(app, { logger: silentLogger })), "app.trustProxy").line).to.equal(1);
  });

  it("builds (and checks) a webhook with dedupe, as a preset or a mapping", async () => {
    const file = tmp.write(
      "dedupe.yaml",
      worker("  hook: {type: webhook, path: /x, dedupe: github}\n  other: {type: webhook, path: /y, dedupe: {header: x-delivery-id, ttlMs: 60000}}", `  - {name: t, source: hook, handler: {ref: "${CJS_HANDLERS}:receive"}}\n  - {name: u, source: other, handler: {ref: "${CJS_HANDLERS}:receive"}}`),
    );
    const app = await loadApp(file, { logger: silentLogger });
    expect(app.tasks.map((t) => (t.source as WebhookSource).options.dedupe?.headers)).to.deep.equal([["x-github-delivery"], ["x-delivery-id"]]);
  });

  it("throws a ConfigError whose issues carry path, message and line", async () => {
    const error = await loadApp(join(FIXTURES, "does-not-exist.yaml")).catch((e: unknown) => e);
    expect(error).to.be.instanceOf(ConfigError);
    expect((error as ConfigError).issues[0]).to.include({ path: "" });
  });
});
