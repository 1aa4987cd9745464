import { expect } from "chai";
import { appOptionsOf } from "../../src/config/app-options";
import { loadConfig } from "../../src/config/index";
import { CJS_HANDLERS, configIssues, issueAt, useTempDir, worker } from "../config/yaml-helpers";

describe("YAML: observability keys", () => {
  const tmp = useTempDir();
  const hook = "  hook: {type: webhook, path: /h, port: 0}";
  const task = (extra = "") => `  - {name: t, source: hook, handler: {ref: "${CJS_HANDLERS}:receive"}${extra}}`;

  it("reads metrics and health as true or a mapping, shutdownDelayMs, tracing, logRefusals and a task's timeoutMs", async () => {
    const on = await loadConfig(tmp.write("on.yaml", worker(hook, task(", timeoutMs: 1500"), "app: {store: memory, metrics: true, health: true, shutdownDelayMs: 0, tracing: false, logRefusals: false}")));
    expect(appOptionsOf(on)).to.deep.include({ metrics: {}, health: {}, shutdownDelayMs: 0, tracing: false, logRefusals: false });
    expect(on.tasks[0].timeoutMs).to.equal(1500);
    const detailed = await loadConfig(
      tmp.write("detailed.yaml", worker(hook, task(), "app: {store: memory, metrics: {path: /prom, host: 0.0.0.0, port: 9464, defaultMetrics: false}, health: {readyPath: /ready}}")),
    );
    expect(appOptionsOf(detailed)).to.deep.include({ metrics: { path: "/prom", host: "0.0.0.0", port: 9464, defaultMetrics: false }, health: { readyPath: "/ready" } });
    const off = await loadConfig(tmp.write("off.yaml", worker(hook, task(), "app: {store: memory, metrics: false}")));
    expect(appOptionsOf(off).metrics).to.equal(undefined);
  });

  it("refuses wrong values with their key path", async () => {
    const issues = await configIssues(
      loadConfig(tmp.write("bad.yaml", worker(hook, task(", timeoutMs: 0"), "app: {store: memory, metrics: yes-please, health: {readyPath: ready}, shutdownDelayMs: -1}"))),
    );
    expect(issueAt(issues, "app.metrics").message).to.match(/must be true, false or a mapping/);
    expect(issueAt(issues, "app.health.readyPath").message).to.match(/path beginning with "\/"/);
    expect(issueAt(issues, "app.shutdownDelayMs").message).to.match(/integer/);
    expect(issueAt(issues, "tasks[0].timeoutMs").message).to.match(/integer/);
  });
});
