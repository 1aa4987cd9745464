import { expect } from "chai";
import { loadConfig, type WebhookResourceConfig } from "../../src/config/index";
import { CJS_HANDLERS, configIssues, issueAt, useTempDir, worker } from "./yaml-helpers";

describe("YAML loading: ${ENV} substitution", () => {
  const tmp = useTempDir();
  const task = `  - {name: t, source: hook, handler: {ref: "${CJS_HANDLERS}:receive"}}`;

  it("replaces ${NAME} and ${NAME:-default} in string values", async () => {
    const file = tmp.write(
      "env.yaml",
      worker("  hook:\n    type: webhook\n    path: /hooks/${HOOK_NAME}\n    host: ${HOST_ADDR:-127.0.0.1}\n    auth: {type: bearer, token: '${TOKEN}'}", task),
    );
    const config = await loadConfig(file, { env: { HOOK_NAME: "github", TOKEN: "s3cret" } });
    const hook = config.resources.get("hook") as WebhookResourceConfig;
    expect(hook.path).to.equal("/hooks/github");
    expect(hook.host).to.equal("127.0.0.1");
    expect(hook.auth).to.deep.equal({ type: "bearer", token: "s3cret" });
  });

  it("uses the default when the variable is empty, and the value when it is set", async () => {
    const file = tmp.write("env.yaml", worker("  hook: {type: webhook, path: '/${A:-a}/${B:-b}'}", task));
    const config = await loadConfig(file, { env: { A: "", B: "set" } });
    expect((config.resources.get("hook") as WebhookResourceConfig).path).to.equal("/a/set");
  });

  it("gives numeric keys a number from a variable (port: ${PORT})", async () => {
    const file = tmp.write("env.yaml", worker("  hook: {type: webhook, path: /x, port: '${PORT}', maxBodyBytes: '${MAX:-1024}'}", task));
    const config = await loadConfig(file, { env: { PORT: "8123" } });
    const hook = config.resources.get("hook") as WebhookResourceConfig;
    expect(hook.port).to.equal(8123);
    expect(hook.maxBodyBytes).to.equal(1024);
  });

  it("keeps a numeric-looking secret a string", async () => {
    const file = tmp.write("env.yaml", worker("  hook: {type: webhook, path: /x, auth: {type: bearer, token: '${TOKEN}'}}", task));
    const config = await loadConfig(file, { env: { TOKEN: "12345" } });
    expect((config.resources.get("hook") as WebhookResourceConfig).auth).to.deep.equal({ type: "bearer", token: "12345" });
  });

  it("refuses a missing variable, naming the key path, the variable and the line", async () => {
    const file = tmp.write(
      "env.yaml",
      worker("  hook:\n    type: webhook\n    path: /x\n    auth:\n      type: bearer\n      token: ${MISSING_TOKEN}", task),
    );
    const issues = await configIssues(loadConfig(file, { env: {} }));
    const issue = issueAt(issues, "resources.hook.auth.token");
    expect(issue.message).to.contain("MISSING_TOKEN").and.contain("not set");
    expect(issue.line).to.equal(8);
  });

  it("says only that the variable is missing, not also that the value is wrong (port: ${PORT} unset)", async () => {
    const file = tmp.write("env.yaml", worker("  hook: {type: webhook, path: /x, port: '${PORT}'}", task));
    const issues = await configIssues(loadConfig(file, { env: {} }));
    expect(issues.filter((i) => i.path === "resources.hook.port").map((i) => i.message)).to.deep.equal(["environment variable PORT is not set (set it, or give a default: ${PORT:-default})"]);
  });

  it("still names a misspelt key whose value's variable is unset: the key is wrong whatever the variable holds", async () => {
    const file = tmp.write("env.yaml", worker("  hook: {type: webhook, path: /x, prot: '${PORT}'}", task));
    const issues = await configIssues(loadConfig(file, { env: {} }));
    const messages = issues.filter((i) => i.path === "resources.hook.prot").map((i) => i.message);
    expect(messages[0]).to.equal("environment variable PORT is not set (set it, or give a default: ${PORT:-default})");
    expect(messages[1]).to.match(/^unknown key \(did you mean "port"\?\)/);
  });

  it("reports every missing variable, not only the first", async () => {
    const file = tmp.write("env.yaml", worker("  hook: {type: webhook, path: '/${ONE}/${TWO}', host: '${THREE}'}", task));
    const issues = await configIssues(loadConfig(file, { env: {} }));
    const text = issues.map((i) => `${i.path}: ${i.message}`).join("\n");
    expect(text).to.contain("ONE").and.contain("TWO").and.contain("THREE");
  });

  it("leaves keys, numbers and booleans written in the file alone, and reads $${ as a literal ${", async () => {
    const file = tmp.write("env.yaml", worker("  hook: {type: webhook, path: '/x', response: {body: {text: 'cost: $${PRICE}'}}}", task));
    const config = await loadConfig(file, { env: {} });
    expect((config.resources.get("hook") as WebhookResourceConfig).response?.body).to.deep.equal({ text: "cost: ${PRICE}" });
  });

  it("refuses a malformed or unclosed ${", async () => {
    const file = tmp.write("env.yaml", worker("  hook: {type: webhook, path: '/${1BAD}', host: 'a${b'}", task));
    const issues = await configIssues(loadConfig(file, { env: {} }));
    expect(issueAt(issues, "resources.hook.path").message).to.match(/malformed/);
    expect(issueAt(issues, "resources.hook.host").message).to.match(/unclosed/);
  });

  it("reads process.env by default", async () => {
    process.env.WEBHOOK_TASKS_TEST_PATH = "/from-process-env";
    try {
      const file = tmp.write("env.yaml", worker("  hook: {type: webhook, path: '${WEBHOOK_TASKS_TEST_PATH}'}", task));
      const config = await loadConfig(file);
      expect((config.resources.get("hook") as WebhookResourceConfig).path).to.equal("/from-process-env");
    } finally {
      delete process.env.WEBHOOK_TASKS_TEST_PATH;
    }
  });
});
