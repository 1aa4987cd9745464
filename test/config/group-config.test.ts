import { expect } from "chai";
import { loadApp } from "../../src/config/index";
import { silentLogger, type CoreApp } from "../../src/index";
import type { TaskGroup } from "../../src/app/flow/group-options";
import { CJS_HANDLERS, configIssues, issueAt, useTempDir, worker } from "./yaml-helpers";

describe("YAML: debounce and batch", () => {
  const tmp = useTempDir();
  const hook = "  hook: {type: webhook, path: /h, port: 0}\n  jobs: {type: queue}";
  const task = (name: string, extra: string, source = "hook") => `  - {name: ${name}, source: ${source}, handler: {ref: "${CJS_HANDLERS}:receive"}, ${extra}}`;

  it("builds them: a key path becomes the group's key function", async () => {
    const file = tmp.write("ok.yaml", worker(hook, [task("d", "debounce: {periodMs: 500, maxWaitMs: 2000, key: body.product.id}"), task("b", "batch: {maxSize: 50, maxWaitMs: 1000, key: tenant}", "jobs")].join("\n")));
    const app: CoreApp = await loadApp(file, { logger: silentLogger });
    const [d, b] = app.tasks as unknown as Array<{ group: TaskGroup }>;
    expect(d!.group.rule).to.deep.equal({ kind: "debounce", periodMs: 500, maxWaitMs: 2000, maxSize: 10_000 });
    expect(d!.group.key!({ body: { product: { id: 7 } } } as never)).to.equal("7");
    expect(b!.group.rule).to.deep.equal({ kind: "batch", maxSize: 50, maxWaitMs: 1000 });
    expect(b!.group.key!({ tenant: "acme" } as never)).to.equal("acme");
  });

  it("refuses wrong settings at start, each at its key path", async () => {
    const ref = "handler: {ref: './x.js:y'}";
    const file = tmp.write(
      "bad.yaml",
      worker(
        hook,
        [
          `  - {name: a, source: hook, ${ref}, debounce: {periodMs: 0}}`,
          `  - {name: b, source: hook, ${ref}, debounce: {period: 100}}`,
          `  - {name: c, source: hook, ${ref}, debounce: {periodMs: 100, key: product.id}}`,
          `  - {name: d, source: hook, ${ref}, batch: {maxSize: 10}}`,
          `  - {name: e, source: hook, ${ref}, batch: {maxSize: 20000, maxWaitMs: 100}}`,
          `  - {name: f, source: hook, ${ref}, batch: 10}`,
          `  - {name: g, source: hook, ${ref}, batch: {maxSize: 10, maxWaitMs: 100, maxsize: 3}}`,
        ].join("\n"),
      ),
    );
    const issues = await configIssues(loadApp(file, { logger: silentLogger }));
    expect(issueAt(issues, "tasks[0].debounce.periodMs").message).to.match(/must be an integer/);
    expect(issueAt(issues, "tasks[1].debounce.periodMs").message).to.equal("is required");
    expect(issueAt(issues, "tasks[1].debounce.period").message).to.match(/unknown key.*did you mean "periodMs"/);
    expect(issueAt(issues, "tasks[2].debounce.key").message).to.match(/must start with body, headers or query/);
    expect(issueAt(issues, "tasks[3].batch.maxWaitMs").message).to.equal("is required");
    expect(issueAt(issues, "tasks[4].batch.maxSize").message).to.match(/10000/);
    expect(issueAt(issues, "tasks[5].batch").message).to.equal("must be a mapping");
    expect(issueAt(issues, "tasks[6].batch.maxsize").message).to.match(/did you mean "maxSize"/);
  });

  it("refuses options that do not go together, naming them", async () => {
    const file = tmp.write(
      "clash.yaml",
      worker(
        hook,
        [
          task("a", "debounce: {periodMs: 100}, batch: {maxSize: 5, maxWaitMs: 100}"),
          task("b", "batch: {maxSize: 5, maxWaitMs: 100}, rateLimit: {limit: 1, periodMs: 1000}"),
          task("c", "debounce: {periodMs: 100}, concurrency: {limit: 2, key: body.id}"),
          task("d", "debounce: {periodMs: 1000, maxWaitMs: 500}"),
        ].join("\n"),
      ),
    );
    const issues = await configIssues(loadApp(file, { logger: silentLogger }));
    expect(issueAt(issues, "tasks[0]").message).to.match(/debounce and batch cannot be used together/);
    expect(issueAt(issues, "tasks[1]").message).to.match(/batch and rateLimit cannot be used together/);
    expect(issueAt(issues, "tasks[2]").message).to.match(/with debounce, concurrency must be a number/);
    expect(issueAt(issues, "tasks[3]").message).to.match(/debounce\.maxWaitMs \(500\) must be at least debounce\.periodMs \(1000\)/);
  });
});
