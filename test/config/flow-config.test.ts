import { expect } from "chai";
import { loadApp } from "../../src/config/index";
import { silentLogger, type CoreApp } from "../../src/index";
import { CJS_HANDLERS, configIssues, issueAt, useTempDir, worker } from "./yaml-helpers";

describe("YAML: concurrency and rateLimit", () => {
  const tmp = useTempDir();
  const hook = "  hook: {type: webhook, path: /h, port: 0}\n  jobs: {type: queue}";
  const task = (extra: string, source = "hook") => `  - {name: t, source: ${source}, handler: {ref: "${CJS_HANDLERS}:receive"}, ${extra}}`;

  it("builds the limits: a key path becomes the task's key function, a number stays per process", async () => {
    const file = tmp.write(
      "ok.yaml",
      worker(hook, [task("concurrency: {limit: 2, key: body.account.id, perProcess: 8}, rateLimit: {limit: 10, periodMs: '${PERIOD}', key: headers.X-Shop}"), `  - {name: u, source: jobs, handler: {ref: "${CJS_HANDLERS}:receive"}, concurrency: 3}`].join("\n")),
    );
    const app: CoreApp = await loadApp(file, { logger: silentLogger }, { env: { PERIOD: "1000" } });
    const [t, u] = app.tasks as unknown as Array<{ concurrency: number; flow?: { concurrency?: { limit: number; key?: (e: unknown) => unknown }; rate?: { limit: number; periodMs: number; key?: (e: unknown) => unknown } } }>;
    expect(t!.concurrency).to.equal(8);
    expect(t!.flow!.concurrency!.limit).to.equal(2);
    expect(t!.flow!.concurrency!.key!({ body: { account: { id: 42 } } })).to.equal("42");
    expect(t!.flow!.concurrency!.key!({ body: { account: {} } })).to.equal(undefined);
    expect(t!.flow!.rate).to.deep.include({ limit: 10, periodMs: 1000 });
    expect(t!.flow!.rate!.key!({ headers: { "x-shop": "acme.example" } })).to.equal("acme.example");
    expect(u!.concurrency).to.equal(3);
    expect(u!.flow).to.equal(undefined);
  });

  it("refuses wrong limits at start, each at its key path", async () => {
    const file = tmp.write(
      "bad.yaml",
      worker(
        hook,
        [
          "  - {name: a, source: hook, handler: {ref: './x.js:y'}, concurrency: {limit: 0}}",
          "  - {name: b, source: hook, handler: {ref: './x.js:y'}, concurrency: {limit: 2, key: account.id}}",
          "  - {name: c, source: hook, handler: {ref: './x.js:y'}, concurrency: {limit: 2, keys: body.id}}",
          "  - {name: d, source: hook, handler: {ref: './x.js:y'}, concurrency: many}",
          "  - {name: e, source: hook, handler: {ref: './x.js:y'}, rateLimit: {limit: 5}}",
          "  - {name: f, source: hook, handler: {ref: './x.js:y'}, rateLimit: {limit: 5, periodMs: 1000, key: headers.a.b}}",
          "  - {name: g, source: hook, handler: {ref: './x.js:y'}, rateLimit: 10}",
        ].join("\n"),
      ),
    );
    const issues = await configIssues(loadApp(file, { logger: silentLogger }));
    expect(issueAt(issues, "tasks[0].concurrency.limit").message).to.equal("must be an integer (1 or more)");
    expect(issueAt(issues, "tasks[1].concurrency.key").message).to.match(/must start with body, headers or query/);
    expect(issueAt(issues, "tasks[2].concurrency.keys").message).to.match(/unknown|not allowed|should not exist/i);
    expect(issueAt(issues, "tasks[3].concurrency").message).to.equal("must be an integer (1 or more), or a mapping { limit, key?, perProcess? }");
    expect(issueAt(issues, "tasks[4].rateLimit.periodMs").message).to.equal("is required");
    expect(issueAt(issues, "tasks[5].rateLimit.key").message).to.match(/headers\.<name> names one header/);
    expect(issueAt(issues, "tasks[6].rateLimit").message).to.equal("must be a mapping");
  });
});
