import { readFileSync } from "node:fs";
import { expect } from "chai";
import { loadConfig, type QueueResourceConfig, type WebhookResourceConfig } from "../../src/config/index";
import { CJS_HANDLERS, configIssues, issueAt, useTempDir, worker } from "./yaml-helpers";

describe("YAML loading: schema", () => {
  const tmp = useTempDir();
  const task = `  - {name: t, source: hook, handler: {ref: "${CJS_HANDLERS}:receive"}}`;

  it("accepts the seed's keys and every extension, with their types", async () => {
    const file = tmp.write(
      "full.yaml",
      [
        "app:",
        "  name: full-app",
        "  store: memory",
        "  dataDir: ./data",
        "  trustProxy: loopback",
        "  shutdownTimeoutMs: 5000",
        "  logLevel: warn",
        "  maxQueued: 1000",
        "  http: {headersTimeoutMs: 1000, requestTimeoutMs: 2000, keepAliveTimeoutMs: 3000, firstByteTimeoutMs: 4000, maxConnections: 500}",
        "resources:",
        "  hook:",
        "    type: webhook",
        "    path: /hooks/github",
        "    methods: [POST, PUT]",
        "    host: 0.0.0.0",
        "    port: 8080",
        "    auth: {type: github, secret: topsecret}",
        "    parser: json",
        "    response: {status_code: 200, body: {ok: true}, headers: {x-a: b}}",
        "    maxBodyBytes: 2048",
        "    ack: received",
        "    ackTimeoutMs: 500",
        "    reply: result",
        "    trustProxy: [10.0.0.0/8]",
        "    publicUrl: https://example.com/hooks/github",
        "    dedupe: github",
        "  results: {type: queue}",
        "tasks:",
        "  - name: t",
        "    source: hook",
        "    emit: results",
        "    concurrency: 4",
        "    retry: {attempts: 3, initialDelayMs: 100, factor: 1.5, maxDelayMs: 1000}",
        `    handler: {ref: "${CJS_HANDLERS}:receive"}`,
        "  - {name: u, source: results, handler: {ref: './x.js:y'}}",
        "",
      ].join("\n"),
    );
    const config = await loadConfig(file);
    expect(config.name).to.equal("full-app");
    expect(config.app).to.include({ store: "memory", dataDir: "./data", trustProxy: "loopback", shutdownTimeoutMs: 5000, logLevel: "warn", maxQueued: 1000 });
    expect({ ...config.app.http }).to.deep.equal({ headersTimeoutMs: 1000, requestTimeoutMs: 2000, keepAliveTimeoutMs: 3000, firstByteTimeoutMs: 4000, maxConnections: 500 });
    const hook = config.resources.get("hook") as WebhookResourceConfig;
    expect(hook).to.include({ type: "webhook", path: "/hooks/github", host: "0.0.0.0", port: 8080, parser: "json", ack: "received", reply: "result" });
    expect(hook.methods).to.deep.equal(["POST", "PUT"]);
    expect(hook.response).to.deep.include({ status_code: 200, body: { ok: true }, headers: { "x-a": "b" } });
    expect((config.resources.get("results") as QueueResourceConfig).type).to.equal("queue");
    expect(config.tasks.map((t) => t.name)).to.deep.equal(["t", "u"]);
    expect(config.tasks[0].retry).to.include({ attempts: 3, factor: 1.5 });
    expect(config.lineOf(["resources", "hook", "port"])).to.equal(16);
  });

  it("accepts anchors and merge keys, and still names the line of a merged resource's problem", async () => {
    const file = tmp.write(
      "merge.yaml",
      ["app: {store: memory}", "resources:", "  a: &common", "    type: webhook", "    port: 9100", "    path: /a", "  b:", "    <<: *common", "    path: /b", "    port: nine", "tasks:", `  - {name: a, source: a, handler: {ref: "${CJS_HANDLERS}:receive"}}`, `  - {name: b, source: b, handler: {ref: "${CJS_HANDLERS}:receive"}}`, ""].join("\n"),
    );
    const issue = issueAt(await configIssues(loadConfig(file)), "resources.b.port");
    expect(issue.line).to.equal(10);
    const fixed = await loadConfig(tmp.write("merge-ok.yaml", readFileSync(file, "utf8").replace("port: nine", "port: 9101")));
    expect(fixed.resources.get("b")).to.include({ type: "webhook", path: "/b", port: 9101 });
  });

  it("leaves top-level x- keys alone, a place for anchors; an x- key anywhere else is still unknown", async () => {
    const lines = ["x-retry: &retry {attempts: 5, factor: 2}", "x-webhook: &webhook", "  type: webhook", "  port: 9100", "app: {store: memory}", "resources:", "  a:", "    <<: *webhook", "    path: /a", "tasks:", `  - {name: a, source: a, retry: *retry, handler: {ref: "${CJS_HANDLERS}:receive"}}`, ""];
    const config = await loadConfig(tmp.write("extensions.yaml", lines.join("\n")));
    expect(config.resources.get("a")).to.include({ type: "webhook", path: "/a", port: 9100 });
    expect(config.tasks[0].retry).to.include({ attempts: 5, factor: 2 });
    const nested = tmp.write("nested-extension.yaml", lines.join("\n").replace("    path: /a", "    path: /a\n    x-note: hello"));
    expect(issueAt(await configIssues(loadConfig(nested)), "resources.a.x-note").message).to.match(/unknown key/);
  });

  it("refuses a path holding a control character (a YAML escape can write U+0000): no request could reach it", async () => {
    const issues = await configIssues(loadConfig(tmp.write("nul-path.yaml", worker('  hook: {type: webhook, path: "/a\\0b"}', task))));
    expect(issueAt(issues, "resources.hook.path").message).to.match(/control characters/);
  });

  it("refuses an app name of dots alone: its data directory would be .data itself or the file's own directory", async () => {
    const issues = await configIssues(loadConfig(tmp.write("dots.yaml", worker("  hook: {type: webhook, path: /x}", task, 'app: {name: "..", store: memory}'))));
    expect(issueAt(issues, "app.name").message).to.match(/not dots alone/);
  });

  it("names the app after the file when app.name is not given", async () => {
    const config = await loadConfig(tmp.write("my worker.yaml", worker("  hook: {type: webhook, path: /x}", task)));
    expect(config.name).to.equal("my-worker");
  });

  it("refuses a wrong type, naming the key path and the line", async () => {
    const file = tmp.write("wrong.yaml", worker("  github:\n    type: webhook\n    path: /x\n    port: eighty", task.replace("hook", "github")));
    const issues = await configIssues(loadConfig(file));
    const issue = issueAt(issues, "resources.github.port");
    expect(issue.message).to.equal("must be an integer from 0 to 65535");
    expect(issue.line).to.equal(6);
  });

  it("refuses unknown keys at every level, suggesting the likely one", async () => {
    const file = tmp.write(
      "unknown.yaml",
      [
        "app: {store: memory, colour: blue}",
        "resources:",
        "  hook: {type: webhook, path: /x, prot: 80}",
        "tasks:",
        `  - {name: t, source: hook, handler: {ref: "${CJS_HANDLERS}:receive", extra: 1}, retry: {atempts: 2}}`,
        "extra: true",
        "",
      ].join("\n"),
    );
    const issues = await configIssues(loadConfig(file));
    expect(issueAt(issues, "app.colour").message).to.match(/^unknown key/);
    expect(issueAt(issues, "resources.hook.prot").message).to.contain('did you mean "port"');
    expect(issueAt(issues, "tasks[0].handler.extra").line).to.equal(5);
    expect(issueAt(issues, "tasks[0].retry.atempts").message).to.contain('did you mean "attempts"');
    expect(issueAt(issues, "extra").line).to.equal(6);
  });

  it("reports all problems at once, not only the first", async () => {
    const file = tmp.write(
      "many.yaml",
      [
        "app: {store: disk, logLevel: loud}",
        "resources:",
        "  hook: {type: webhook, path: no-slash, methods: [], parser: xml, ack: maybe}",
        "  other: {type: ftp}",
        "tasks:",
        "  - {name: '', source: hook, handler: {ref: no-colon}, concurrency: 0}",
        "",
      ].join("\n"),
    );
    const issues = await configIssues(loadConfig(file));
    const paths = issues.map((i) => i.path);
    expect(paths).to.include.members([
      "app.store",
      "app.logLevel",
      "resources.hook.path",
      "resources.hook.methods",
      "resources.hook.parser",
      "resources.hook.ack",
      "resources.other.type",
      "tasks[0].name",
      "tasks[0].handler.ref",
      "tasks[0].concurrency",
    ]);
    expect(issueAt(issues, "app.store").message).to.equal("must be memory, embedded or a postgres:// URL");
    expect(issueAt(issues, "tasks[0].handler.ref").message).to.contain("<module_path>:<export_name>");
  });

  it("suggests the closest value for a misspelt enum or HTTP method, and refuses status codes outside 200-599", async () => {
    const file = tmp.write(
      "typos.yaml",
      worker("  hook: {type: webhook, path: /h, methods: [post, PSOT], parser: jsn, ack: recieved, response: {status_code: 99}}", task, "app: {store: embeded}"),
    );
    const issues = await configIssues(loadConfig(file));
    expect(issueAt(issues, "app.store").message).to.equal('must be memory, embedded or a postgres:// URL (did you mean "embedded"?)');
    expect(issueAt(issues, "resources.hook.parser").message).to.equal('must be one of: json, form, text, raw, auto (did you mean "json"?)');
    expect(issueAt(issues, "resources.hook.ack").message).to.contain('(did you mean "received"?)');
    expect(issueAt(issues, "resources.hook.methods").message).to.equal(
      'must be a non-empty list of HTTP methods (GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS); "PSOT" is not one (did you mean "POST"?)',
    );
    expect(issueAt(issues, "resources.hook.response.status_code").message).to.equal("must be an integer from 200 to 599");
  });

  it("suggests the key a transposition misspelt, not another as far by plain edit distance", async () => {
    const file = tmp.write("swap.yaml", worker("  hook: {type: queue}", task, "app: {store: memory, console: {atuh: {token: x}}}"));
    const issues = await configIssues(loadConfig(file));
    expect(issueAt(issues, "app.console.atuh").message).to.match(/^unknown key \(did you mean "auth"\?\)/);
  });

  it("refuses at app.store, with its line, a postgres:// URL the store cannot read or whose ?schema= it refuses, without showing the password", async () => {
    const env = { DB: "postgres://app:s3cret@db:notaport/hooks", DB2: "postgres://app:s3cret@db/hooks?schema=Bad-Schema" };
    const unreadable = await configIssues(loadConfig(tmp.write("url.yaml", worker("  hook: {type: queue}", task, "app:\n  store: ${DB}")), { env }));
    expect(issueAt(unreadable, "app.store").line).to.equal(2);
    expect(issueAt(unreadable, "app.store").message).to.match(/not a valid URL/).and.not.contain("s3cret");
    const schema = await configIssues(loadConfig(tmp.write("schema.yaml", worker("  hook: {type: queue}", task, "app:\n  store: ${DB2}")), { env }));
    expect(issueAt(schema, "app.store").line).to.equal(2);
    expect(issueAt(schema, "app.store").message).to.match(/schema/).and.contain('"Bad-Schema"').and.not.contain("s3cret");
  });

  it("requires resources, tasks, and each resource's type and path, and each task's name, source and handler", async () => {
    const issues = await configIssues(loadConfig(tmp.write("missing.yaml", "app: {store: memory}\n")));
    expect(issueAt(issues, "resources").message).to.equal("is required");
    expect(issueAt(issues, "tasks").message).to.equal("is required");
    const more = await configIssues(loadConfig(tmp.write("missing2.yaml", worker("  hook: {path: /x}\n  other: {type: webhook}", "  - {}"))));
    expect(issueAt(more, "resources.hook.type").message).to.match(/is required/);
    expect(issueAt(more, "resources.other.path").message).to.equal("is required");
    expect(issueAt(more, "tasks[0].name").message).to.equal("is required");
    expect(issueAt(more, "tasks[0].source").message).to.equal("is required");
    expect(issueAt(more, "tasks[0].handler").message).to.equal("is required");
  });

  it("refuses lists where mappings belong and the reverse", async () => {
    const issues = await configIssues(loadConfig(tmp.write("shape.yaml", "resources: [a]\ntasks: {a: 1}\napp: 3\n")));
    expect(issueAt(issues, "resources").message).to.equal("must be a mapping");
    expect(issueAt(issues, "tasks").message).to.equal("must be a non-empty list");
    expect(issueAt(issues, "app").message).to.equal("must be a mapping");
    const items = await configIssues(loadConfig(tmp.write("items.yaml", worker("  hook: /x", "  - just-a-string"))));
    expect(issueAt(items, "resources.hook").message).to.match(/must be a mapping/);
    expect(issueAt(items, "tasks[0]").message).to.equal("must be a mapping");
  });

  it("checks the response block", async () => {
    const file = tmp.write("response.yaml", worker("  hook: {type: webhook, path: /x, response: {status_code: 99, headers: {x-a: 1}, colour: red}}", task));
    const issues = await configIssues(loadConfig(file));
    expect(issueAt(issues, "resources.hook.response.status_code").message).to.equal("must be an integer from 200 to 599");
    expect(issueAt(issues, "resources.hook.response.headers").message).to.equal("must be a mapping of names to strings");
    expect(issueAt(issues, "resources.hook.response.colour").message).to.match(/^unknown key/);
  });

  it("treats an empty value (port:) as a wrong value, not as absent", async () => {
    const issues = await configIssues(loadConfig(tmp.write("null.yaml", worker("  hook:\n    type: webhook\n    path: /x\n    port:", task))));
    expect(issueAt(issues, "resources.hook.port").message).to.match(/must be an integer/);
  });

  it("checks dedupe: a preset name or a mapping", async () => {
    const issues = await configIssues(
      loadConfig(tmp.write("dedupe.yaml", worker("  hook: {type: webhook, path: /x, dedupe: gitlab}\n  other: {type: webhook, path: /y, dedupe: {hedaer: x}}", `${task}\n  - {name: u, source: other, handler: {ref: "${CJS_HANDLERS}:receive"}}`))),
    );
    expect(issueAt(issues, "resources.hook.dedupe").message).to.match(/must be one of/);
    expect(issueAt(issues, "resources.other.dedupe.hedaer").message).to.contain('did you mean "header"');
  });
});
