import { expect } from "chai";
import { hostname } from "node:os";
import { Agent } from "node:http";
import { CoreApp, createDefaultLogger, GitHubSignature, type LogLevel } from "../../src/index";
import { useApps, webhook } from "../helpers/app";
import { nodeRequest } from "../helpers/http-client";
import { until } from "../helpers/wait";

type Line = Record<string, unknown> & { level: number; msg: string };

/** The default pino logger, its lines parsed as JSON into `lines`. */
function jsonLogger(lines: Line[], level: LogLevel = "info") {
  return createDefaultLogger(level, { app: "logs-app" }, { write: (text: string) => void lines.push(JSON.parse(text) as Line) });
}

const WARN = 40;
const INFO = 30;
const SECRET = "gh-webhook-secret-value";

describe("logs (pino)", () => {
  const newApp = useApps();

  it("a bad signature gives one warn line with its code, the client and a request id, and no secret", async () => {
    const lines: Line[] = [];
    const app = newApp("logs-app", { logger: jsonLogger(lines) });
    const source = webhook({ path: "/gh", auth: new GitHubSignature(SECRET) });
    app.task({ source, name: "github" }, () => undefined);
    await app.start();
    const signature = "sha256=" + "0".repeat(64);
    const reply = await fetch(source.url, { method: "POST", body: '{"a":1}', headers: { "content-type": "application/json", "x-hub-signature-256": signature, authorization: "Bearer abc", "x-request-id": "req-42" } });
    expect(reply.status).to.equal(401);
    await until(() => lines.some((l) => l.msg.startsWith("request refused")));
    const refusals = lines.filter((l) => l.msg.startsWith("request refused"));
    expect(refusals).to.have.length(1);
    const [line] = refusals;
    // Labelled with the source (its path without "/"), not with a task: a source may feed several.
    expect(line).to.include({ level: WARN, source: "gh", status: 401, code: ((await reply.json()) as { error: string }).error, client: "127.0.0.1", requestId: "req-42", method: "POST", path: "/gh", app: "logs-app" });
    // pino's own keys are kept beside the app's: replicas writing to one stream tell apart.
    expect(line).to.include({ pid: process.pid, hostname: hostname() });
    const all = JSON.stringify(lines);
    for (const secret of [SECRET, signature, "Bearer abc"]) expect(all).not.to.include(secret);
  });

  it("a receiver's error line names its task once (the logger is the task's)", async () => {
    const texts: string[] = [];
    const app = newApp("logs-app", { logger: createDefaultLogger("info", { app: "logs-app" }, { write: (text: string) => void texts.push(text) }) });
    const source = webhook({ path: "/keyed" });
    app.task({ source, name: "keyed", orderingKey: () => { throw new Error("no key here"); } }, () => undefined);
    await app.start();
    expect((await fetch(source.url, { method: "POST", body: "{}", headers: { "content-type": "application/json" } })).status).to.equal(500);
    await until(() => texts.some((t) => t.includes("cannot compute the event's ordering key")));
    const text = texts.find((t) => t.includes("cannot compute the event's ordering key"))!;
    // JSON.parse keeps the last of two equal keys: the text itself must hold one.
    expect(text.match(/"task":/g), text).to.have.length(1);
    expect(JSON.parse(text)).to.include({ task: "keyed" }).and.have.property("error").that.includes("no key here");
  });

  it("an ordering key that fails on every request is logged once per 10 s, not once per request", async () => {
    const lines: Line[] = [];
    const app = newApp("logs-app", { logger: jsonLogger(lines) });
    const source = webhook({ path: "/keyed" });
    app.task({ source, name: "keyed", orderingKey: (event) => (event.body as { customer: { id: string } }).customer.id }, () => undefined);
    await app.start();
    const started = Date.now();
    for (let i = 0; i < 200; i++) {
      const reply = await fetch(source.url, { method: "POST", body: "{}", headers: { "content-type": "application/json" } });
      await reply.arrayBuffer();
      expect(reply.status).to.equal(500);
    }
    const windows = Math.floor((Date.now() - started) / 10_000) + 1;
    const failed = lines.filter((l) => l.msg.startsWith("cannot compute the event's ordering key"));
    // One line per request before: 200 lines.
    expect(failed.length, `${failed.length} lines`).to.be.within(1, windows);
    expect(failed[0]).to.include({ task: "keyed" });
  });

  it("404 and 405 are logged at info with the listener's origin and no source; 503 too", async () => {
    const lines: Line[] = [];
    const app = newApp("logs-app", { logger: jsonLogger(lines), maxQueued: 1 });
    const source = webhook({ path: "/only-post" });
    // Held until the end, so the queue stays full; released then, so the stop need not give up on it.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    app.task({ source, name: "t" }, () => held);
    await app.start();
    const origin = new URL(source.url).origin;
    expect((await fetch(`${origin}/missing`)).status).to.equal(404);
    expect((await fetch(source.url, { method: "DELETE" })).status).to.equal(405);
    expect((await fetch(source.url, { method: "POST", body: "{}" })).status).to.equal(202);
    expect((await fetch(source.url, { method: "POST", body: "{}" })).status).to.equal(503);
    await until(() => lines.filter((l) => l.msg.startsWith("request refused")).length === 3);
    const [notFound, notAllowed, full] = lines.filter((l) => l.msg.startsWith("request refused"));
    expect(full).to.include({ level: INFO, source: "only-post", status: 503, code: "queue_full" });
    expect(notFound).to.include({ level: INFO, source: "", origin, status: 404, code: "not_found", path: "/missing" });
    expect(notAllowed).to.include({ level: INFO, source: "", origin, status: 405, code: "method_not_allowed" });
    expect(notFound.requestId).to.be.a("string").with.length.greaterThan(8);
    release();
  });

  it("1,000 bad requests in a second give a bounded number of lines, and one count of the rest", async () => {
    const lines: Line[] = [];
    const app = newApp("logs-app", { logger: jsonLogger(lines) });
    const source = webhook({ path: "/gh", auth: new GitHubSignature(SECRET) });
    app.task({ source, name: "github" }, () => undefined);
    await app.start();
    const agent = new Agent({ keepAlive: true, maxSockets: 50 });
    const started = Date.now();
    try {
      const all = Array.from({ length: 1_000 }, () =>
        nodeRequest(source.url, { agent, headers: { "content-type": "application/json", "x-hub-signature-256": "sha256=" + "1".repeat(64) }, body: "{}" }),
      );
      const replies = await Promise.all(all);
      expect(replies.every((r) => r.status === 401)).to.equal(true);
    } finally {
      agent.destroy();
    }
    const seconds = Math.ceil((Date.now() - started) / 1000);
    const refused = () => lines.filter((l) => l.msg.startsWith("request refused"));
    const suppressed = () => lines.filter((l) => typeof l.suppressed === "number");
    await until(() => refused().length + suppressed().reduce((n, l) => n + (l.suppressed as number), 0) === 1_000, 4_000);
    expect(refused().length).to.be.at.most(10 * (seconds + 1));
    expect(suppressed().length).to.be.at.most(seconds + 1);
    expect(suppressed()[0]).to.include({ source: "gh", code: "signature_mismatch", status: 401 });
  });

  it("ctx.logger: a child with app, task, eventId and attempt; reserved fields kept apart; nothing it is given can throw", async () => {
    const lines: Line[] = [];
    const app = newApp("logs-app", { logger: jsonLogger(lines) });
    const source = webhook({ path: "/ctx" });
    const thrown: unknown[] = [];
    app.task({ source, name: "chatty" }, (ctx) => {
      const circular: Record<string, unknown> = { name: "loop" };
      circular.self = circular;
      const calls: Array<() => void> = [
        () => ctx.logger.info({ big: 2n ** 70n }, "bigint"),
        () => ctx.logger.info({ circular }, "circular"),
        () => ctx.logger.info({ get bad(): string { throw new Error("getter says no"); } }, "getter"),
        () => ctx.logger.info({ msg: "fake", level: "fatal", time: 1, app: "other", task: "other", eventId: "other", attempt: 99, kept: true }, "reserved"),
        () => ctx.logger.warn({ err: new TypeError("kaput"), headers: { authorization: "Bearer t0k3n", "x-hub-signature-256": "sha256=abc", accept: "*/*" } }, "with error"),
        () => ctx.logger.child({ task: "spoof", step: 2 }).info("child line"),
      ];
      for (const call of calls) {
        try {
          call();
        } catch (error) {
          thrown.push(error);
        }
      }
    });
    await app.start();
    const reply = await fetch(source.url, { method: "POST", body: "{}", headers: { "content-type": "application/json" } });
    const { id } = (await reply.json()) as { id: string };
    await until(() => lines.some((l) => l.msg === "child line"));
    expect(thrown).to.deep.equal([]);
    const line = (msg: string) => lines.find((l) => l.msg === msg)!;
    for (const msg of ["bigint", "circular", "getter", "reserved", "with error", "child line"]) {
      expect(line(msg), msg).to.include({ app: "logs-app", task: "chatty", eventId: id, attempt: 1 });
    }
    expect(line("bigint").big).to.equal(Number(2n ** 70n));
    expect(line("circular").circular).to.include({ name: "loop" });
    expect(line("getter").logError).to.include("getter says no");
    const reserved = line("reserved");
    expect(reserved).to.include({ level: INFO, msg: "reserved", kept: true });
    expect(reserved.fields).to.deep.equal({ msg: "fake", level: "fatal", time: 1, app: "other", task: "other", eventId: "other", attempt: 99 });
    const withError = line("with error");
    expect(withError.err).to.include({ type: "TypeError", message: "kaput" });
    expect((withError.err as { stack: string }).stack).to.match(/^TypeError: kaput\n\s+at /);
    expect(withError.headers).to.deep.equal({ authorization: "[redacted]", "x-hub-signature-256": "[redacted]", accept: "*/*" });
    expect(line("child line")).to.include({ step: 2 });
  });

  it("an unknown level, as logLevel or as $WEBHOOK_TASKS_LOG_LEVEL, is refused with the list of valid ones", () => {
    const valid = "use one of trace, debug, info, warn, error, fatal, silent";
    expect(() => new CoreApp("logs-app", { store: "memory", logLevel: "verbose" as LogLevel })).to.throw(TypeError, `logLevel "verbose" is not a log level: ${valid}`);
    const before = process.env.WEBHOOK_TASKS_LOG_LEVEL;
    process.env.WEBHOOK_TASKS_LOG_LEVEL = "loud";
    try {
      expect(() => new CoreApp("logs-app", { store: "memory" })).to.throw(TypeError, `WEBHOOK_TASKS_LOG_LEVEL="loud" is not a log level: ${valid}`);
      // The option comes first: the variable is not read.
      expect(() => new CoreApp("logs-app", { store: "memory", logLevel: "warn" })).not.to.throw();
    } finally {
      if (before === undefined) delete process.env.WEBHOOK_TASKS_LOG_LEVEL;
      else process.env.WEBHOOK_TASKS_LOG_LEVEL = before;
    }
  });

  it("a failing task logs its error with type, message and stack; the dead letter keeps the stack", async () => {
    const lines: Line[] = [];
    const app = newApp("logs-app", { logger: jsonLogger(lines) });
    const source = webhook({ path: "/fail" });
    app.task({ source, name: "failing", retry: { attempts: 1 } }, () => {
      throw new RangeError("out of range");
    });
    await app.start();
    await fetch(source.url, { method: "POST", body: "{}" });
    await until(() => lines.some((l) => l.msg.includes("dead letter")));
    const line = lines.find((l) => l.msg.includes("dead letter"))!;
    expect(line).to.include({ task: "failing", attempt: 1 });
    expect(line.err).to.include({ type: "RangeError", message: "out of range" });
    expect((line.err as { stack: string }).stack).to.include("at ");
    const [letter] = await app.deadLetters.list();
    expect(letter.error).to.equal("out of range");
    expect(letter.message.lastError).to.match(/^RangeError: out of range\n\s+at /);
  });
});
