import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { loadApp, loadConfig, type ConfigIssue } from "../../src/config/index";
import type { RegisteredTask } from "../../src/app/task-registry";
import type { WebhookEvent } from "../../src/index";
import { IssueList } from "../../src/config/issue-list";
import { parseFilter } from "../../src/config/filter/parse-filter";
import { filterPredicate } from "../../src/config/filter/filter-predicate";
import { CJS_HANDLERS, configIssues, issueAt, useTempDir, worker } from "./yaml-helpers";

const event = (init: Partial<WebhookEvent>): WebhookEvent => ({ body: null, headers: {}, query: {}, method: "POST", path: "/h", client: ["127.0.0.1", 1], received_at: 0, ...init });

/** The predicate of a filter given as a JS value (what YAML parses to). */
function compile(spec: unknown): (event: WebhookEvent) => boolean {
  const issues = new IssueList();
  const node = parseFilter(spec, ["filter"], issues);
  expect(issues.items).to.deep.equal([]);
  return filterPredicate(node!);
}

/** The issues of a filter, as "path: message". */
function problems(spec: unknown): string[] {
  const issues = new IssueList();
  expect(parseFilter(spec, ["tasks", 0, "filter"], issues)).to.equal(undefined);
  return issues.items.map((i) => `${i.path}: ${i.message}`);
}

describe("YAML filter: what matches", () => {
  it("a field with a value equals it; several fields must all hold", () => {
    const match = compile({ "body.action": "opened", "body.pull_request.base.ref": "main" });
    expect(match(event({ body: { action: "opened", pull_request: { base: { ref: "main" } } } }))).to.equal(true);
    expect(match(event({ body: { action: "opened", pull_request: { base: { ref: "dev" } } } }))).to.equal(false);
    expect(match(event({ body: { action: "closed" } }))).to.equal(false);
    expect(match(event({ body: "opened" }))).to.equal(false);
  });

  it("body values compare strictly; headers and query as text", () => {
    expect(compile({ "body.n": 1 })(event({ body: { n: "1" } }))).to.equal(false);
    expect(compile({ "body.n": 1 })(event({ body: { n: 1 } }))).to.equal(true);
    expect(compile({ "body.x": null })(event({ body: { x: null } }))).to.equal(true);
    expect(compile({ "headers.X-Version": 2 })(event({ headers: { "x-version": "2" } }))).to.equal(true);
    expect(compile({ "query.debug": true })(event({ query: { debug: "true" } }))).to.equal(true);
  });

  it("list indices are path segments; the whole body is `body`", () => {
    expect(compile({ "body.commits.0.id": "abc" })(event({ body: { commits: [{ id: "abc" }] } }))).to.equal(true);
    expect(compile({ body: "ping" })(event({ body: "ping" }))).to.equal(true);
  });

  it("oneOf, prefix, exists", () => {
    const kind = compile({ "headers.x-github-event": { oneOf: ["push", "pull_request"] } });
    expect(kind(event({ headers: { "x-github-event": "push" } }))).to.equal(true);
    expect(kind(event({ headers: { "x-github-event": "issues" } }))).to.equal(false);
    const ref = compile({ "body.ref": { prefix: "refs/tags/" } });
    expect(ref(event({ body: { ref: "refs/tags/v1" } }))).to.equal(true);
    expect(ref(event({ body: { ref: "refs/heads/main" } }))).to.equal(false);
    expect(ref(event({ body: { ref: 5 } }))).to.equal(false);
    expect(compile({ "body.deleted": { exists: true } })(event({ body: { deleted: null } }))).to.equal(true);
    expect(compile({ "body.deleted": { exists: false } })(event({ body: {} }))).to.equal(true);
    expect(compile({ "query.token": { exists: false } })(event({ query: { token: "x" } }))).to.equal(false);
  });

  it("numeric comparisons take numbers and decimal text, nothing else", () => {
    const big = compile({ "body.amount": { gte: 1000, lt: 5000 } });
    expect(big(event({ body: { amount: 1000 } }))).to.equal(true);
    expect(big(event({ body: { amount: 5000 } }))).to.equal(false);
    expect(big(event({ body: { amount: "2500" } }))).to.equal(true);
    expect(big(event({ body: { amount: "lots" } }))).to.equal(false);
    expect(big(event({ body: {} }))).to.equal(false);
    expect(compile({ "headers.x-attempt": { gt: 1 } })(event({ headers: { "x-attempt": "2" } }))).to.equal(true);
    expect(compile({ "body.n": { lte: 0 } })(event({ body: { n: -1 } }))).to.equal(true);
  });

  it("a repeated query parameter holds when any of its values does", () => {
    expect(compile({ "query.tag": "b" })(event({ query: { tag: ["a", "b"] } }))).to.equal(true);
    expect(compile({ "query.tag": "c" })(event({ query: { tag: ["a", "b"] } }))).to.equal(false);
  });

  it("allOf and anyOf nest", () => {
    const match = compile({
      anyOf: [{ "body.sender.type": "Bot" }, { allOf: [{ "body.action": "opened" }, { "body.draft": false }] }],
    });
    expect(match(event({ body: { sender: { type: "Bot" } } }))).to.equal(true);
    expect(match(event({ body: { action: "opened", draft: false } }))).to.equal(true);
    expect(match(event({ body: { action: "opened", draft: true } }))).to.equal(false);
  });

  it("does not read inherited properties", () => {
    expect(compile({ "body.constructor": { exists: true } })(event({ body: {} }))).to.equal(false);
  });
});

describe("YAML filter: every refusal, at its key path", () => {
  it("the filter and its combinators must be mappings and non-empty lists of them", () => {
    expect(problems("opened")).to.deep.equal(["tasks[0].filter: must be a mapping of conditions: fields (body.action, headers.x-github-event, query.mode) or allOf/anyOf"]);
    expect(problems({})).to.have.length(1);
    expect(problems({ allOf: [] })).to.deep.equal(["tasks[0].filter.allOf: must be a non-empty list of conditions"]);
    expect(problems({ anyOf: "x" })).to.deep.equal(["tasks[0].filter.anyOf: must be a non-empty list of conditions"]);
    expect(problems({ anyOf: [{ "body.a": 1 }, "b"] })).to.deep.equal([
      "tasks[0].filter.anyOf[1]: must be a mapping of conditions: fields (body.action, headers.x-github-event, query.mode) or allOf/anyOf",
    ]);
  });

  it("a key that is not a field or a combinator, with a guess", () => {
    const tail = "; use headers.<name>, query.<name>, body.<path> (dot-separated, e.g. body.pull_request.base.ref), allOf or anyOf";
    expect(problems({ "bdy.action": "opened" })).to.deep.equal([`tasks[0].filter["bdy.action"]: not a field or a combinator (did you mean "body.action"?)${tail}`]);
    expect(problems({ anyof: [] })).to.deep.equal([`tasks[0].filter.anyof: not a field or a combinator (did you mean "anyOf"?)${tail}`]);
    expect(problems({ "body..a": 1 })).to.deep.equal([`tasks[0].filter["body..a"]: has an empty name or path segment: write body.<path> (body.pull_request.base.ref)`]);
    expect(problems({ "headers.": 1 })).to.deep.equal([`tasks[0].filter["headers."]: has an empty name or path segment: write headers.<name>`]);
    expect(problems({ "sender.login": "x" })).to.deep.equal([`tasks[0].filter["sender.login"]: not a field or a combinator${tail}`]);
    expect(problems({ headers: "x" })).to.deep.equal(["tasks[0].filter.headers: names no header: write headers.<name>"]);
    expect(problems({ query: "x" })).to.deep.equal(["tasks[0].filter.query: names no parameter: write query.<name>"]);
  });

  it("a list, an empty mapping or another value where a condition belongs", () => {
    expect(problems({ "body.action": ["opened", "closed"] })).to.deep.equal([`tasks[0].filter["body.action"]: a list is not a condition: to match one of several values, write {oneOf: [...]}`]);
    expect(problems({ "body.action": {} })).to.deep.equal([`tasks[0].filter["body.action"]: must be a value to equal, or a mapping of operators (equals, oneOf, exists, prefix, gt, gte, lt, lte)`]);
  });

  it("each operator's operand", () => {
    const at = (op: string, message: string) => `tasks[0].filter["body.a"].${op}: ${message}`;
    expect(problems({ "body.a": { equals: { x: 1 } } })).to.deep.equal([at("equals", "must be a string, a number, true, false or null")]);
    expect(problems({ "body.a": { oneOf: [] } })).to.deep.equal([at("oneOf", "must be a non-empty list of strings, numbers, booleans or null")]);
    expect(problems({ "body.a": { oneOf: [[1]] } })).to.deep.equal([at("oneOf", "must be a non-empty list of strings, numbers, booleans or null")]);
    expect(problems({ "body.a": { exists: "yes" } })).to.deep.equal([at("exists", "must be true or false")]);
    expect(problems({ "body.a": { prefix: "" } })).to.deep.equal([at("prefix", "must be a non-empty string")]);
    for (const op of ["gt", "gte", "lt", "lte"]) expect(problems({ "body.a": { [op]: "many" } })).to.deep.equal([at(op, "must be a number")]);
  });

  it("a misspelt operator, with a guess", () => {
    expect(problems({ "body.ref": { prefx: "refs/" } })).to.deep.equal([
      `tasks[0].filter["body.ref"].prefx: unknown operator (did you mean "prefix"?); operators: equals, oneOf, exists, prefix, gt, gte, lt, lte`,
    ]);
    expect(problems({ "body.n": { greater: 1 } })).to.deep.equal([`tasks[0].filter["body.n"].greater: unknown operator; operators: equals, oneOf, exists, prefix, gt, gte, lt, lte`]);
  });

  it("numbers and flags from ${ENV} (text) are accepted", () => {
    const match = compile({ "body.n": { gte: "10" }, "body.d": { exists: "false" } });
    expect(match(event({ body: { n: 10 } }))).to.equal(true);
  });
});

describe("YAML: on and filter in a file", () => {
  const tmp = useTempDir();
  const github = "  gh: {type: webhook, path: /gh, port: 0, auth: {type: github, secret: s}}";
  const handler = `handler: {ref: "${CJS_HANDLERS}:receive"}`;

  it("builds a task that takes the named events its filter accepts", async () => {
    const file = tmp.write("ok.yaml", worker(github, [
      "  - name: prs",
      "    source: gh",
      "    on: [pull_request.opened, pull_request.reopened]",
      "    filter:",
      "      body.pull_request.base.ref: main",
      "      anyOf:",
      "        - body.pull_request.draft: false",
      "        - headers.x-force: {exists: true}",
      `    ${handler}`,
    ].join("\n")));
    const app = await loadApp(file);
    const accepts = (app.tasks[0] as RegisteredTask).accepts!;
    const pr = (name: string, ref: string, draft: boolean) => event({ name, body: { pull_request: { base: { ref }, draft } } });
    expect(accepts(pr("pull_request.opened", "main", false))).to.equal(true);
    expect(accepts(pr("pull_request.closed", "main", false))).to.equal(false);
    expect(accepts(pr("pull_request.opened", "dev", false))).to.equal(false);
    expect(accepts(pr("pull_request.opened", "main", true))).to.equal(false);
    expect(accepts({ ...pr("pull_request.reopened", "main", true), headers: { "x-force": "1" } })).to.equal(true);
  });

  it("a number YAML read from the file matches header and query text of the same number, however written", async () => {
    // YAML reads 2.10 as the number 2.1, 007 as 7 and 1e3 as 1000: the text written is gone by then.
    const file = tmp.write("numbers.yaml", worker(github, [
      "  - name: t",
      "    source: gh",
      "    filter:",
      "      headers.x-version: 2.10",
      "      query.id: {oneOf: [007, 1e3]}",
      `    ${handler}`,
    ].join("\n")));
    const accepts = ((await loadApp(file)).tasks[0] as RegisteredTask).accepts!;
    expect(accepts(event({ headers: { "x-version": "2.10" }, query: { id: "007" } }))).to.equal(true);
    expect(accepts(event({ headers: { "x-version": "2.1" }, query: { id: "1000" } }))).to.equal(true);
    expect(accepts(event({ headers: { "x-version": "2.11" }, query: { id: "7" } }))).to.equal(false);
    expect(accepts(event({ headers: { "x-version": "2.10" }, query: { id: "1001" } }))).to.equal(false);
    expect(accepts(event({ headers: { "x-version": "two" }, query: { id: "7" } }))).to.equal(false);
  });

  it("refuses a bad on, with its line", async () => {
    const file = tmp.write("on.yaml", worker(github, [`  - name: t`, `    source: gh`, `    on: "invoice*"`, `    ${handler}`].join("\n")));
    const issue = issueAt(await configIssues(loadConfig(file)), "tasks[0].on");
    expect(issue.message).to.equal('must be an event name or a non-empty list of them ("pull_request.opened", [push, "invoice.*"]); "invoice*": "*" stands for a whole segment ("invoice.*", not "invoice*")');
    expect(issue.line).to.equal(7);
    const empty = tmp.write("empty.yaml", worker(github, `  - {name: t, source: gh, on: [], ${handler}}`));
    expect(issueAt(await configIssues(loadConfig(empty)), "tasks[0].on").message).to.match(/^must be an event name or a non-empty list of them/);
  });

  it("refuses on for a webhook that names no events, at tasks[i].on", async () => {
    const plain = "  hook: {type: webhook, path: /plain, port: 0, auth: {type: bearer, token: t}}";
    const file = tmp.write("unnamed.yaml", worker(plain, `  - {name: t, source: hook, on: push, ${handler}}`));
    const issue: ConfigIssue = issueAt(await configIssues(loadApp(file)), "tasks[0].on");
    expect(issue.message).to.match(/^task "t": on needs named events, and WebhookSource POST 127\.0\.0\.1:0\/plain does not name its events/);
  });

  it("a webhook's eventName names events for on, from a header or a body field", async () => {
    const hook = "  hook: {type: webhook, path: /partner, port: 0, eventName: {bodyField: meta.event}}";
    const app = await loadApp(tmp.write("named.yaml", worker(hook, `  - {name: t, source: hook, on: "order.*", ${handler}}`)));
    expect(app.tasks).to.have.length(1);
    const both = "  hook: {type: webhook, path: /partner, port: 0, eventName: {header: x-event, bodyField: type}}";
    const issues = await configIssues(loadApp(tmp.write("both.yaml", worker(both, `  - {name: t, source: hook, ${handler}}`))));
    expect(issueAt(issues, "resources.hook.eventName").message).to.equal("give exactly one of header (a header name) or bodyField (a dot path into the body, e.g. meta.event)");
    const typo = "  hook: {type: webhook, path: /partner, port: 0, eventName: {hedaer: x-event}}";
    const unknown = await configIssues(loadConfig(tmp.write("typo.yaml", worker(typo, `  - {name: t, source: hook, ${handler}}`))));
    expect(issueAt(unknown, "resources.hook.eventName.hedaer").message).to.match(/^unknown key \(did you mean "header"\?\)/);
  });

  it("refuses a filter on a queue task, and a bad filter with its line", async () => {
    const resources = `${github}\n  work: {type: queue}`;
    const tasks = [`  - {name: a, source: gh, emit: work, ${handler}}`, `  - {name: b, source: work, filter: {body.x: 1}, ${handler}}`, "  - name: c", "    source: gh", "    filter:", "      body.ref: {prefx: refs/}", `    ${handler}`].join("\n");
    const file = tmp.write("filters.yaml", worker(`${resources}\n  gh2: {type: webhook, path: /gh2, port: 0}`, tasks.replace("source: gh\n    filter", "source: gh2\n    filter")));
    const issues = await configIssues(loadConfig(file));
    expect(issueAt(issues, "tasks[1].filter").message).to.equal('a filter matches a webhook\'s headers, query and body; this task\'s source "work" is a queue');
    const typo = issueAt(issues, 'tasks[2].filter["body.ref"].prefx');
    expect(typo.message).to.match(/^unknown operator \(did you mean "prefix"\?\)/);
    expect(typo.line).to.equal(12);
  });
});

describe("YAML filter: the example in docs/yaml-and-cli.md", () => {
  const tmp = useTempDir();

  it("loads, with webhooks for its sources", async () => {
    const page = readFileSync(join(__dirname, "../../../docs/yaml-and-cli.md"), "utf8");
    const block = /```yaml fragment\n(tasks:\n {2}- name: review-main[\s\S]*?)```/.exec(page);
    expect(block, "the filter example").not.to.equal(null);
    const resources = [
      "resources:",
      "  github: {type: webhook, path: /gh, port: 0, auth: {type: github, secret: s}}",
      "  stripe: {type: webhook, path: /st, port: 0, auth: {type: stripe, secret: whsec_s}}",
    ].join("\n");
    const file = tmp.write("docs.yaml", `app: {store: memory}\n${resources}\n${block![1]}`);
    const config = await loadConfig(file);
    expect(config.tasks.map((t) => t.on)).to.deep.equal([["pull_request.opened", "pull_request.reopened"], "payment_intent.*"]);
  });
});
