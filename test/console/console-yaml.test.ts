import { expect } from "chai";
import { appOptionsOf } from "../../src/config/app-options";
import { loadApp, loadConfig, silentLogger } from "../../src/index";
import { CJS_HANDLERS, configIssues, issueAt, useTempDir, worker } from "../config/yaml-helpers";

describe("YAML: app.console", () => {
  const tmp = useTempDir();
  const hook = "  hook: {type: webhook, path: /h, host: 127.0.0.1, port: 0}";
  const task = `  - {name: t, source: hook, handler: {ref: "${CJS_HANDLERS}:receive"}}`;
  const file = (consoleBlock: string) => tmp.write("app.yaml", worker(hook, task, `app: {store: memory, console: ${consoleBlock}}`));
  const env = { CONSOLE_TOKEN: "token-from-the-environment-0123", CONSOLE_PASSWORD: "password-from-env", EMPTY: "" };

  it("a bad log level in the environment is placed at no key of the file (not at app.name)", async () => {
    const named = tmp.write("named.yaml", worker(hook, task, "app: {name: named, store: memory, console: true}"));
    const saved = process.env.WEBHOOK_TASKS_LOG_LEVEL;
    process.env.WEBHOOK_TASKS_LOG_LEVEL = "verbose";
    try {
      const level = await configIssues(loadApp(named, {}, { env }));
      const issue = level.find((i) => i.message.startsWith("WEBHOOK_TASKS_LOG_LEVEL"));
      expect(issue, JSON.stringify(level)).to.not.equal(undefined);
      expect(issue!.path).to.equal("");
      expect(issue!.line).to.equal(undefined);
    } finally {
      if (saved === undefined) delete process.env.WEBHOOK_TASKS_LOG_LEVEL;
      else process.env.WEBHOOK_TASKS_LOG_LEVEL = saved;
    }
  });

  it("reads true, a mapping, and secrets from the environment", async () => {
    expect(appOptionsOf(await loadConfig(file("true"))).console).to.deep.equal({});
    expect(appOptionsOf(await loadConfig(file("false"))).console).to.equal(undefined);
    const token = await loadConfig(file("{host: 0.0.0.0, port: 9401, path: /console, auth: {token: '${CONSOLE_TOKEN}'}}"), { env });
    expect(appOptionsOf(token).console).to.deep.equal({ host: "0.0.0.0", port: 9401, path: "/console", auth: { token: env.CONSOLE_TOKEN } });
    const basic = await loadConfig(file("{port: '9402', auth: {username: ops, password: '${CONSOLE_PASSWORD}'}}"), { env });
    expect(appOptionsOf(basic).console).to.deep.equal({ port: 9402, auth: { username: "ops", password: env.CONSOLE_PASSWORD } });
  });

  it("builds an app whose console answers, with the token from the environment", async () => {
    const app = await loadApp(file("{port: 0, auth: {token: '${CONSOLE_TOKEN}'}}"), { logger: silentLogger }, { env });
    await app.start();
    try {
      const refused = await fetch(app.consoleUrl!);
      expect(refused.status).to.equal(401);
      await refused.text();
      const page = await fetch(app.consoleUrl!, { headers: { authorization: `Bearer ${env.CONSOLE_TOKEN}` } });
      expect(page.status).to.equal(200);
      expect(await page.text()).to.include("Overview");
    } finally {
      await app.stop();
    }
  });

  it("says precisely what is wrong with the block", async () => {
    const cases: Array<[string, string, RegExp]> = [
      ["{port: 99999}", "app.console.port", /must be an integer from 0 to 65535/],
      ["{path: console}", "app.console.path", /must be a path beginning with "\/"/],
      ["yes-please", "app.console", /must be true, false or a mapping/],
      ["{prot: 9400}", "app.console.prot", /unknown key.*port/],
      ["{auth: {token: short}}", "app.console.auth.token", /must be at least 16 characters long/],
      ['{auth: {token: "console-token-0123456789abcdef\\n"}}', "app.console.auth.token", /must not hold spaces, line breaks or control characters/],
      ["{auth: {token: '${EMPTY}'}}", "app.console.auth.token", /is empty: is the environment variable/],
      ["{auth: {token: 12345678901234567890}}", "app.console.auth.token", /must be a string/],
      ["{auth: {token: '${CONSOLE_TOKEN}', username: ops, password: '${CONSOLE_PASSWORD}'}}", "app.console.auth", /either token or username and password, not both/],
      ["{auth: {username: ops}}", "app.console.auth.password", /is required with username/],
      ["{auth: {password: '${CONSOLE_PASSWORD}'}}", "app.console.auth.username", /is required with password/],
      ["{auth: {username: 'a:b', password: '${CONSOLE_PASSWORD}'}}", "app.console.auth.username", /must not contain ':'/],
      ["{auth: {username: ops, password: short}}", "app.console.auth.password", /at least 12 characters/],
      ["{auth: {}}", "app.console.auth", /needs token/],
      ["{auth: {tokn: abc}}", "app.console.auth.tokn", /unknown key.*token/],
    ];
    for (const [block, path, message] of cases) {
      const issues = await configIssues(loadConfig(file(block), { env }));
      expect(issueAt(issues, path).message, block).to.match(message);
    }
    // What start() would refuse, found without starting: no auth on every interface, a webhook path among the pages.
    const open = await configIssues(loadApp(file("{host: 0.0.0.0, port: 9400}"), {}, { env }));
    expect(issueAt(open, "app.console").message).to.include("reachable from other machines without authentication");
    const shared = tmp.write("shared.yaml", worker("  hook: {type: webhook, path: /console/events, host: 127.0.0.1, port: 8080}", task, "app: {store: memory, console: {host: 127.0.0.1, port: 8080, path: /console}}"));
    expect(issueAt(await configIssues(loadApp(shared, {}, { env })), "app.console").message).to.include("webhook path /console/events would hide the console's pages");
    const unset = await configIssues(loadConfig(file("{auth: {token: '${NOT_SET_ANYWHERE}'}}"), { env: {} }));
    expect(issueAt(unset, "app.console.auth.token").message).to.include("environment variable NOT_SET_ANYWHERE is not set");
  });
});
