import { expect } from "chai";
import { loadConfig } from "../../src/config/index";
import { CJS_HANDLERS, configIssues, issueAt, useTempDir, worker } from "./yaml-helpers";

describe("YAML loading: references between tasks and resources", () => {
  const tmp = useTempDir();
  const ref = `{ref: "${CJS_HANDLERS}:receive"}`;

  it("refuses an unknown source name, suggesting the likely one and listing the resources", async () => {
    const file = tmp.write("src.yaml", worker("  github: {type: webhook, path: /x}", `  - {name: a, source: github, handler: ${ref}}\n  - {name: b, source: gihtub, handler: ${ref}}`));
    const issue = issueAt(await configIssues(loadConfig(file)), "tasks[1].source");
    expect(issue.message).to.equal('no resource named "gihtub" (did you mean "github"?); resources: github');
    expect(issue.line).to.equal(6);
  });

  it("a resource with a misspelt type gets a suggestion, and its tasks are not told it does not exist", async () => {
    const file = tmp.write("type.yaml", worker("  github: {type: webhok, path: /x}\n  q: {type: queueu}", `  - {name: a, source: github, emit: q, handler: ${ref}}`));
    const issues = await configIssues(loadConfig(file));
    expect(issueAt(issues, "resources.github.type").message).to.equal('must be one of: webhook, queue (did you mean "webhook"?)');
    expect(issueAt(issues, "resources.q.type").message).to.equal('must be one of: webhook, queue (did you mean "queue"?)');
    expect(issues.map((i) => i.path)).to.deep.equal(["resources.github.type", "resources.q.type"]);
  });

  it("refuses emit to an unknown resource or to a webhook", async () => {
    const file = tmp.write(
      "emit.yaml",
      worker("  hook: {type: webhook, path: /x}\n  other: {type: webhook, path: /y}", `  - {name: a, source: hook, emit: nowhere, handler: ${ref}}\n  - {name: b, source: other, emit: hook, handler: ${ref}}`),
    );
    const issues = await configIssues(loadConfig(file));
    expect(issueAt(issues, "tasks[0].emit").message).to.match(/no queue resource named "nowhere"/);
    expect(issueAt(issues, "tasks[1].emit").message).to.match(/is a webhook; emit needs a resource of type queue/);
  });

  it("refuses duplicate task names", async () => {
    const file = tmp.write("dup.yaml", worker("  hook: {type: webhook, path: /x}\n  q: {type: queue}", `  - {name: same, source: hook, emit: q, handler: ${ref}}\n  - {name: same, source: q, handler: ${ref}}`));
    const issue = issueAt(await configIssues(loadConfig(file)), "tasks[1].name");
    expect(issue.message).to.match(/duplicate task name "same" \(also tasks\[0\]\)/);
  });

  it("lets several tasks share a webhook or a queue, and refuses a webhook no task uses", async () => {
    const file = tmp.write(
      "share.yaml",
      worker(
        "  hook: {type: webhook, path: /x}\n  idle: {type: webhook, path: /idle}\n  q: {type: queue}",
        `  - {name: a, source: hook, emit: q, handler: ${ref}}\n  - {name: b, source: hook, handler: ${ref}}\n  - {name: c, source: q, handler: ${ref}}\n  - {name: d, source: q, handler: ${ref}}`,
      ),
    );
    const issues = await configIssues(loadConfig(file));
    expect(issues.map((i) => i.path)).to.deep.equal(["resources.idle"]);
    expect(issueAt(issues, "resources.idle").message).to.match(/no task has this webhook as its source/);
  });

  it("refuses a queue name the store cannot hold and a task that emits to its own source", async () => {
    const file = tmp.write("q.yaml", worker("  hook: {type: webhook, path: /x}\n  'bad queue': {type: queue}\n  q: {type: queue}", `  - {name: a, source: hook, handler: ${ref}}\n  - {name: b, source: q, emit: q, handler: ${ref}}`));
    const issues = await configIssues(loadConfig(file));
    expect(issueAt(issues, 'resources["bad queue"]').message).to.match(/queue's name/);
    expect(issueAt(issues, "tasks[1].emit").message).to.match(/loop/);
  });
});
