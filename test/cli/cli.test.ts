import { once } from "node:events";
import { rmSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { LOG_LEVELS } from "../../src/util/logger";
import { FIXTURES, outLines, useTempDir, worker } from "../config/yaml-helpers";
import { until } from "../helpers/wait";
import { RunningCli, runCli } from "./cli-process";

const WORKER = join(FIXTURES, "worker.yaml");
const STACK_LINE = /^\s+at .+\(?.*:\d+:\d+\)?$/m;

/** Holds a loopback port so that nothing else can bind it. */
async function occupyPort(): Promise<{ port: number; server: Server }> {
  const server = createServer();
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const address = server.address();
  if (typeof address !== "object" || address === null) throw new Error("no address");
  return { port: address.port, server };
}

describe("CLI: usage", () => {
  it("--help prints the usage and exits 0", async () => {
    const result = await runCli(["--help"]);
    expect(result.code).to.equal(0);
    expect(result.stdout).to.contain("Usage: webhook-tasks").and.contain("dead-letters replay");
    expect((await runCli(["run", "--help"])).code).to.equal(0);
  });

  it("--help lists every command once, and no option twice under one command", async () => {
    const { stdout } = await runCli(["--help"]);
    const commands = [...stdout.matchAll(/^  ([a-z][a-z-]*) /gm)].map((m) => m[1]);
    expect([...new Set(commands)]).to.deep.equal(["run", "check", "events", "dead-letters", "status", "send"]);
    // Option lines belong to the command line above them; a block is one command's lines.
    const blocks = stdout.split(/^(?=  [a-z])/m);
    for (const block of blocks) {
      const options = [...block.matchAll(/^ {6}(--[a-z-]+)/gm)].map((m) => m[1]);
      expect(options, block).to.deep.equal([...new Set(options)]);
    }
  });

  it("an unknown option is named, with the closest option and the command's options, not node's text about positionals", async () => {
    const typo = await runCli(["send", "http://127.0.0.1:1/x", "--presett", "github"]);
    expect(typo.code).to.equal(2);
    expect(typo.stderr).to.equal(
      'error: unknown option "--presett" for send (did you mean "--preset"?); its options: --preset, --secret-env, --file, --data, --header, --method, --help\n' +
        "Run 'webhook-tasks --help' for usage.\n",
    );
    const inline = await runCli(["status", "--jsn=1", "--store", "/nowhere"]);
    expect(inline.stderr).to.contain('error: unknown option "--jsn" for status (did you mean "--json"?); its options: --module, --store, --json, --help');
    const far = await runCli(["run", "--verbose", WORKER]);
    expect([far.code, far.stderr.split("\n")[0]]).to.deep.equal([2, 'error: unknown option "--verbose" for run; its options: --log-level, --help']);
  });

  it("--help lists every --log-level run accepts", async () => {
    const { stdout } = await runCli(["--help"]);
    const line = stdout.slice(stdout.indexOf("--log-level <level>"), stdout.indexOf("(overrides app.logLevel)"));
    expect([...line.matchAll(/\b([a-z]+)\b(?= \||\s*$)/g)].map((m) => m[1])).to.deep.equal([...LOG_LEVELS]);
  });

  it("--version prints the package version", async () => {
    const result = await runCli(["--version"]);
    expect(result.code).to.equal(0);
    expect(result.stdout.trim()).to.match(/^\d+\.\d+\.\d+/);
  });

  it("exits 2 on usage errors: no command, unknown command, unknown option, missing file argument", async () => {
    for (const args of [[], ["launch"], ["check", "--fast", WORKER], ["check"], ["run", "a.yaml", "b.yaml"], ["dead-letters"], ["dead-letters", "show", WORKER]]) {
      const result = await runCli(args);
      expect(result.code, args.join(" ")).to.equal(2);
      expect(result.stderr, args.join(" ")).not.to.match(STACK_LINE);
    }
  });
});

describe("CLI: check", () => {
  const tmp = useTempDir();

  it("a handler module whose promise rejects unhandled at import gives one error line and exit code 1, no stack trace", async () => {
    const dir = tmp.dir();
    tmp.write("rejects.js", 'Promise.reject(new Error("cannot reach the cache"));\nexports.receive = async () => 1;\n');
    const file = tmp.write("rejects.yaml", worker("  q: {type: queue}", `  - {name: t, source: q, handler: {ref: "${join(dir, "rejects.js")}:receive"}}`));
    const result = await runCli(["check", file]);
    expect(result.code).to.equal(1);
    expect(result.stderr).to.contain("cannot reach the cache");
    expect(result.stderr).not.to.match(STACK_LINE);
    expect(result.stderr.trim().split("\n")).to.have.length(1);
  });

  it("validates a good file, prints a summary and exits 0", async () => {
    const result = await runCli(["check", WORKER]);
    expect(result.code, result.stderr).to.equal(0);
    expect(result.stdout).to.contain('OK - app "yaml-worker", store memory, 3 tasks');
    expect(result.stdout).to.match(/receive\s+POST\|PUT http:\/\/127\.0\.0\.1:0\/hooks\/incoming \(auth bearer\) -> queue received/);
    expect(result.stdout).to.match(/consume\s+queue received/);
    const json = await runCli(["check", "--json", WORKER]);
    expect(JSON.parse(json.stdout)).to.deep.include({ ok: true, app: "yaml-worker", store: "memory" });
  });

  it("does not listen: it succeeds on a port another process holds", async () => {
    const { port, server } = await occupyPort();
    try {
      const result = await runCli(["check", WORKER], { PORT: String(port) });
      expect(result.code, result.stderr).to.equal(0);
      expect(result.stdout).to.contain(`127.0.0.1:${port}/hooks/incoming`);
    } finally {
      server.close();
    }
  });

  it("exits 1 on a bad file with one file:line: path: message line per problem, and no stack trace", async () => {
    const file = tmp.write(
      "bad.yaml",
      worker("  github: {type: webhook, path: /x, port: eighty}", "  - {name: t, source: gitub, handler: {ref: './missing.js:handle'}}"),
    );
    const result = await runCli(["check", file]);
    expect(result.code).to.equal(1);
    const lines = result.stderr.trim().split("\n");
    expect(lines).to.have.length(3);
    expect(lines[0]).to.equal(`${file}:3: resources.github.port: must be an integer from 0 to 65535`);
    expect(lines.slice(1).join("\n")).to.match(/:5: tasks\[0\]\.source: no resource named "gitub"/);
    expect(lines.slice(1).join("\n")).to.match(/:5: tasks\[0\]\.handler\.ref: cannot find module "\.\/missing\.js"/);
    expect(result.stderr).not.to.match(STACK_LINE);
    expect(result.stdout).to.equal("");
    const json = await runCli(["check", "--json", file]);
    expect(json.code).to.equal(1);
    expect(json.stderr.trim().split("\n")).to.deep.equal(lines);
    const report = JSON.parse(json.stdout) as { ok: boolean; file: string; problems: Array<{ path: string; line?: number; message: string }> };
    expect(report).to.deep.include({ ok: false, file });
    expect(report.problems).to.have.length(3);
    expect(report.problems[0]).to.deep.equal({ path: "resources.github.port", line: 3, message: "must be an integer from 0 to 65535" });
  });

  it("shows paths relative to the working directory when the file is inside it", async () => {
    const file = tmp.write("rel.yaml", "resources: {}\ntasks: []\n");
    const result = await runCli(["check", "rel.yaml"], {}, tmp.dir());
    expect(result.code).to.equal(1);
    expect(result.stderr).to.match(/^rel\.yaml:2: tasks: must be a non-empty list$/m);
    expect(file).to.contain("rel.yaml");
  });

  it("exits 1 on a syntax error, naming the line", async () => {
    const file = tmp.write("syntax.yaml", "resources:\n  a: [1, 2\ntasks: []\n");
    const result = await runCli(["check", file]);
    expect(result.code).to.equal(1);
    expect(result.stderr).to.match(/syntax\.yaml:\d+: YAML syntax error: /);
  });

  it("exits 1 when a variable is missing, naming the key path and the variable", async () => {
    const file = tmp.write("env.yaml", worker("  hook:\n    type: webhook\n    path: /x\n    auth: {type: bearer, token: '${NO_SUCH_TOKEN_VAR}'}", `  - {name: t, source: hook, handler: {ref: '${join(FIXTURES, "handlers.cjs")}:receive'}}`));
    const result = await runCli(["check", file], { NO_SUCH_TOKEN_VAR: undefined });
    expect(result.code).to.equal(1);
    expect(result.stderr).to.match(/env\.yaml:6: resources\.hook\.auth\.token: environment variable NO_SUCH_TOKEN_VAR is not set/);
  });

  it("lists the tasks each shared source feeds; refuses reply result on a webhook feeding several", async () => {
    const handler = `{ref: '${join(FIXTURES, "handlers.cjs")}:receive'}`;
    const tasks = `  - {name: a, source: org, emit: q, handler: ${handler}}\n  - {name: b, source: org, handler: ${handler}}\n  - {name: c, source: q, handler: ${handler}}\n  - {name: d, source: q, handler: ${handler}}`;
    const file = tmp.write("fan.yaml", worker("  org: {type: webhook, path: /org, port: 0}\n  q: {type: queue}", tasks));
    const result = await runCli(["check", file]);
    expect(result.code, result.stderr).to.equal(0);
    expect(result.stdout).to.contain("POST http://127.0.0.1:0/org feeds 2 tasks, each its own copy: a, b");
    expect(result.stdout).to.contain("queue q feeds 2 tasks, each its own copy: c, d");
    const json = JSON.parse((await runCli(["check", "--json", file])).stdout) as { sources: unknown };
    expect(json.sources).to.deep.equal([
      { source: "POST http://127.0.0.1:0/org", tasks: ["a", "b"] },
      { source: "queue q", tasks: ["c", "d"] },
    ]);
    const slash = tmp.write("slash.yaml", worker("  org: {type: webhook, path: /org, port: 0, reply: result}", tasks.split("\n").slice(0, 2).join("\n").replace("emit: q, ", "")));
    const refused = await runCli(["check", slash]);
    expect(refused.code).to.equal(1);
    expect(refused.stderr).to.match(/reply "result" answers with the task's result, and 2 tasks take its events \("a", "b"\)/);
  });

  it("exits 1 on a duplicate route", async () => {
    const handler = `{ref: '${join(FIXTURES, "handlers.cjs")}:receive'}`;
    const file = tmp.write("routes.yaml", worker("  a: {type: webhook, path: /same}\n  b: {type: webhook, path: /same}", `  - {name: a, source: a, handler: ${handler}}\n  - {name: b, source: b, handler: ${handler}}`));
    const result = await runCli(["check", file]);
    expect(result.code).to.equal(1);
    expect(result.stderr).to.match(/routes\.yaml:4: resources\.b: duplicate route: POST \/same on 127\.0\.0\.1:8080 is claimed by resources\.a too/);
  });
});

describe("CLI: run", () => {
  const outFile = join(tmpdir(), `webhook-tasks-cli-out-${process.pid}.jsonl`);
  const running: RunningCli[] = [];
  afterEach(async () => {
    await Promise.all(running.splice(0).map((r) => r.stop("SIGKILL")));
    rmSync(outFile, { force: true });
  });
  const start = (args: string[], env: Record<string, string | undefined> = {}) => {
    const cli = new RunningCli(args, { OUT_FILE: outFile, ...env });
    running.push(cli);
    return cli;
  };

  it("runs the YAML app in a child process: logs its URLs, handles requests, chains tasks, exits 0 on SIGTERM", async () => {
    const cli = start([WORKER]);
    const started = await cli.waitForLog((l) => l.msg === "started");
    expect(started.listeners).to.be.an("array").with.length(1);
    const urls = await cli.urls(2);
    const incoming = urls.get("receive")!;
    expect(incoming).to.match(/^http:\/\/127\.0\.0\.1:\d+\/hooks\/incoming$/);
    expect(incoming.startsWith(String((started.listeners as string[])[0]))).to.equal(true);

    expect((await fetch(incoming, { method: "POST", body: "{}", headers: { "content-type": "application/json" } })).status).to.equal(401);
    const response = await fetch(incoming, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "Bearer test-token" },
      body: JSON.stringify({ order: 7 }),
    });
    expect(response.status).to.equal(202);
    await until(() => outLines(outFile).some((l) => l.kind === "consume"));
    expect(outLines(outFile)).to.deep.include({ kind: "receive", value: { order: 7 } });
    expect(outLines(outFile)).to.deep.include({ kind: "consume", value: { got: { order: 7 }, task: "receive" } });

    const esm = await fetch(urls.get("esm")!, { method: "POST", body: "hello" });
    expect(esm.status).to.equal(200);
    await until(() => outLines(outFile).some((l) => l.kind === "esm"));

    expect(await cli.stop("SIGTERM")).to.equal(0);
    expect(cli.logs.map((l) => l.msg)).to.include("stopped");
  });

  it("stops gracefully on SIGINT too", async () => {
    const cli = start([WORKER]);
    await cli.urls(2);
    expect(await cli.stop("SIGINT")).to.equal(0);
  });

  it("honours --log-level", async () => {
    const cli = start(["--log-level", "debug", WORKER]);
    await cli.urls(2);
    expect(await cli.stop("SIGTERM")).to.equal(0);
    const quiet = start(["--log-level", "loud", WORKER]);
    expect(await quiet.exit()).to.equal(2);
  });

  it("exits 1 with one clear line when the port is in use, without a stack trace", async () => {
    const { port, server } = await occupyPort();
    try {
      const cli = start([WORKER], { PORT: String(port) });
      expect(await cli.exit()).to.equal(1);
      expect(cli.stderr.trim()).to.equal(`error: cannot listen on 127.0.0.1:${port}: the address is already in use`);
    } finally {
      server.close();
    }
  });

  it("exits 1 on a bad file before anything listens", async () => {
    const cli = start([WORKER], { PORT: "not-a-port" });
    expect(await cli.exit()).to.equal(1);
    expect(cli.stderr).to.match(/worker\.yaml:13: resources\.incoming\.port: must be an integer from 0 to 65535/);
    expect(cli.stderr).not.to.contain('"started"');
    expect(cli.stderr).not.to.match(STACK_LINE);
  });

  it("exits 1 on a file that does not exist", async () => {
    const cli = start([join(FIXTURES, "nope.yaml")]);
    expect(await cli.exit()).to.equal(1);
    expect(cli.stderr).to.match(/nope\.yaml: cannot read the file: no such file/);
  });
});
