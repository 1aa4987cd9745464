import { writeFileSync } from "node:fs";
import { expect } from "chai";
import { ConfigError, loadConfig } from "../../src/config/index";
import { CJS_HANDLERS, configIssues, useTempDir } from "./yaml-helpers";

describe("YAML loading: syntax", () => {
  const tmp = useTempDir();

  it("names the line of a syntax error", async () => {
    const file = tmp.write("bad.yaml", ["resources:", "  hook:", "    type: webhook", "    methods: [POST, PUT", "tasks: []", ""].join("\n"));
    const issues = await configIssues(loadConfig(file));
    expect(issues).to.have.length.greaterThan(0);
    expect(issues[0].message).to.match(/^YAML syntax error: /);
    expect(issues[0].line).to.be.a("number").within(4, 6);
    expect(issues[0].path).to.equal("");
  });

  it("names the line where an unclosed quoted string starts, not the end of the file", async () => {
    const file = tmp.write("quote.yaml", ["resources:", "  hook:", '    path: "/hooks', "    type: webhook", "tasks: []", ""].join("\n"));
    const issues = await configIssues(loadConfig(file));
    expect(issues[0].line).to.equal(3);
    expect(issues[0].message).to.match(/not closed/);
  });

  it("reports one syntax error, not its cascade, and explains ${...} inside a flow mapping", async () => {
    const file = tmp.write("flow.yaml", ["resources:", "  hook: {type: webhook, port: ${PORT}}", "tasks: []", ""].join("\n"));
    const issues = await configIssues(loadConfig(file));
    expect(issues).to.have.length(1);
    expect(issues[0].line).to.equal(2);
    expect(issues[0].message).to.contain("quote values that use ${...}");
  });

  it("refuses bad indentation with its line", async () => {
    const file = tmp.write("indent.yaml", ["resources:", "  hook:", "    type: webhook", "   path: /x", ""].join("\n"));
    const issues = await configIssues(loadConfig(file));
    expect(issues[0].message).to.match(/^YAML syntax error/);
    expect(issues[0].line).to.equal(4);
  });

  it("refuses a key given twice, naming the second line", async () => {
    const file = tmp.write("dup.yaml", ["resources:", "  hook: {type: queue}", "  hook: {type: queue}", "tasks: []", ""].join("\n"));
    const issues = await configIssues(loadConfig(file));
    expect(issues[0].message).to.match(/unique/);
    expect(issues[0].line).to.equal(3);
  });

  it("finds a key given twice at any depth (a task's mapping in the list), and takes two merge keys", async () => {
    const nested = tmp.write("dup-nested.yaml", ["resources:", "  q: {type: queue}", "tasks:", "  - name: a", "    source: q", "    name: b", ""].join("\n"));
    const issues = await configIssues(loadConfig(nested));
    expect(issues[0].message).to.match(/unique/);
    expect(issues[0].line).to.equal(6);
    const merges = tmp.write("merges.yaml", ["x-a: &a {type: queue}", "x-b: &b {type: queue}", "resources:", "  q:", "    <<: *a", "    <<: *b", "tasks: []", ""].join("\n"));
    expect((await configIssues(loadConfig(merges))).map((i) => i.message).join("\n")).not.to.match(/unique/);
  });

  it("refuses an empty file and a file that is not a mapping", async () => {
    const empty = await configIssues(loadConfig(tmp.write("empty.yaml", "")));
    expect(empty[0].message).to.match(/empty/);
    const list = await configIssues(loadConfig(tmp.write("list.yaml", "- a\n- b\n")));
    expect(list[0].message).to.match(/mapping/);
  });

  it("refuses a file that cannot be read, naming it", async () => {
    const error = await loadConfig(`${tmp.dir()}/missing.yaml`).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).to.be.instanceOf(ConfigError);
    expect((error as ConfigError).message).to.match(/missing\.yaml/).and.match(/no such file/);
  });

  it("formats problems as file:line: path: message, one per line", async () => {
    const file = tmp.write(
      "two.yaml",
      ["app: {store: memory}", "resources:", "  hook: {type: webhook, path: /x, port: high}", "tasks:", `  - {name: t, source: hook, handler: {ref: "${CJS_HANDLERS}:receive"}, colour: red}`, ""].join("\n"),
    );
    const error = (await loadConfig(file).catch((e: unknown) => e)) as ConfigError;
    expect(error).to.be.instanceOf(ConfigError);
    expect(error.lines("two.yaml")).to.deep.equal([
      "two.yaml:3: resources.hook.port: must be an integer from 0 to 65535",
      `two.yaml:5: tasks[0].colour: unknown key; known keys: name, source, handler, emit, concurrency, rateLimit, debounce, batch, retry, timeoutMs, on, filter`,
    ]);
    expect(error.message.split("\n")).to.have.length(3);
  });

  it("refuses bytes that are not UTF-8, naming their line, instead of reading them as replacement characters", async () => {
    const text = ["app: {store: memory}", "resources:", "  hook:", "    type: webhook", "    path: /x", "    auth: {type: github, secret: caf\xe9-secret}", "tasks:", `  - {name: t, source: hook, handler: {ref: "${CJS_HANDLERS}:receive"}}`, ""].join("\n");
    const file = tmp.write("latin1.yaml", "");
    writeFileSync(file, Buffer.from(text, "latin1"));
    const issues = await configIssues(loadConfig(file));
    expect(issues).to.have.length(1);
    expect(issues[0].line).to.equal(6);
    expect(issues[0].message).to.match(/not valid UTF-8/).and.not.contain("secret");
  });

  it("refuses a UTF-16 file as not UTF-8", async () => {
    const file = tmp.write("utf16.yaml", "");
    writeFileSync(file, Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from("resources: {}\ntasks: []\n", "utf16le")]));
    const issues = await configIssues(loadConfig(file));
    expect(issues[0].line).to.equal(1);
    expect(issues[0].message).to.match(/not valid UTF-8/).and.match(/UTF-16/);
  });

  it("names the line of an alias whose anchor is not defined", async () => {
    const file = tmp.write("alias.yaml", ["app: {store: memory}", "resources:", "  q: {type: queue}", "tasks:", `  - {name: t, source: *nowhere, handler: {ref: "${CJS_HANDLERS}:receive"}}`, ""].join("\n"));
    const issues = await configIssues(loadConfig(file));
    expect(issues).to.have.length(1);
    expect(issues[0].line).to.equal(5);
    expect(issues[0].path).to.equal("tasks[0].source");
    expect(issues[0].message).to.match(/nowhere/);
  });

  it("names the line of the first alias when aliases expand too far (billion laughs)", async () => {
    const lines = ["app: {store: memory}", "resources:", "  q:", "    type: queue", "tasks: []", "x:", '  a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]'];
    for (let i = 1; i < 10; i++) lines.push(`  a${i}: &a${i} [${Array(9).fill(`*a${i - 1}`).join(", ")}]`);
    const file = tmp.write("bomb.yaml", `${lines.join("\n")}\n`);
    const issues = await configIssues(loadConfig(file));
    expect(issues).to.have.length(1);
    expect(issues[0].line).to.equal(8);
    expect(issues[0].path).to.equal("x.a1[0]");
    expect(issues[0].message).to.match(/alias/);
  });
});
