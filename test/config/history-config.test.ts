import { expect } from "chai";
import { appOptionsOf } from "../../src/config/app-options";
import { loadApp, loadConfig } from "../../src/config/index";
import { silentLogger } from "../../src/index";
import { CJS_HANDLERS, configIssues, issueAt, useTempDir, worker } from "./yaml-helpers";

describe("YAML: app.history", () => {
  const tmp = useTempDir();
  const hook = "  hook: {type: webhook, path: /h, port: 0}";
  const task = `  - {name: t, source: hook, handler: {ref: "${CJS_HANDLERS}:receive"}}`;
  const load = (name: string, app: string) => loadConfig(tmp.write(name, worker(hook, task, app)));

  it("reads false, true, or a mapping; left out, the history is on with its defaults", async () => {
    expect(appOptionsOf(await load("off.yaml", "app: {store: memory, history: false}")).history).to.equal(false);
    expect(appOptionsOf(await load("on.yaml", "app: {store: memory, history: true}")).history).to.deep.equal({});
    expect(appOptionsOf(await load("set.yaml", "app: {store: memory, history: {retainMs: 86400000, maxEvents: 5000}}")).history).to.deep.equal({ retainMs: 86_400_000, maxEvents: 5_000 });
    expect(appOptionsOf(await load("env.yaml", 'app: {store: memory, history: {retainMs: "3600000"}}')).history).to.deep.equal({ retainMs: 3_600_000 });
    expect(appOptionsOf(await load("default.yaml", "app: {store: memory}")).history).to.equal(undefined);
  });

  it("builds an app whose history is off with history: false", async () => {
    const app = await loadApp(tmp.write("app.yaml", worker(hook, task, "app: {store: memory, history: false}")), { logger: silentLogger });
    await app.start();
    try {
      const error = await app.events.list().then(() => undefined, (e: Error) => e);
      expect(error?.message).to.match(/history is off/);
    } finally {
      await app.stop();
    }
  });

  it("refuses wrong values with their key path", async () => {
    const issues = await configIssues(load("bad.yaml", "app: {store: memory, history: {retainMs: 0, maxEvents: -1, retain: 5}}"));
    expect(issueAt(issues, "app.history.retainMs").message).to.match(/must be an integer \(1 or more\)/);
    expect(issueAt(issues, "app.history.maxEvents").message).to.match(/must be an integer \(1 or more\)/);
    expect(issueAt(issues, "app.history.retain").message).to.match(/unknown key.*retainMs/);
    const notMapping = await configIssues(load("word.yaml", "app: {store: memory, history: forever}"));
    expect(issueAt(notMapping, "app.history").message).to.match(/must be true, false or a mapping/);
  });
});
