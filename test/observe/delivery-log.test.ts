import { expect } from "chai";
import { createDefaultLogger, MemoryStore, type LogLevel } from "../../src/index";
import { AppObservability } from "../../src/observe/app-observability";
import { debugEnabled } from "../../src/observe/delivery-log";
import { silentLogger } from "../../src/util/logger";
import { useApps, webhook } from "../helpers/app";
import { until } from "../helpers/wait";

type Line = Record<string, unknown> & { level: number; msg: string };

/** The default pino logger at `level`, its lines parsed as JSON into `lines`. */
function jsonLogger(lines: Line[], level: LogLevel) {
  return createDefaultLogger(level, { app: "follow" }, { write: (text: string) => void lines.push(JSON.parse(text) as Line) });
}

const DEBUG = 20;
const WARN = 40;
const ERROR = 50;

async function post(url: string, body: unknown): Promise<string> {
  const reply = await fetch(url, { method: "POST", body: JSON.stringify(body), headers: { "content-type": "application/json" } });
  expect(reply.status).to.equal(202);
  return ((await reply.json()) as { id: string }).id;
}

describe("following one delivery in the logs", () => {
  const newApp = useApps();

  it("at debug, the 202's id is on the received line, each run's start and end, and every line of the emitted event (its retry too) names it as parentId", async () => {
    const lines: Line[] = [];
    const app = newApp("follow", { logger: jsonLogger(lines, "debug") });
    const source = webhook({ path: "/orders" });
    app.task({ source, name: "order", emit: "invoices" }, async (_ctx, event: { body: { n: number } }) => ({ invoice: event.body.n }));
    let invoiced = 0;
    app.task({ source: "invoices", name: "invoice", retry: { attempts: 3, initialDelayMs: 5 } }, async () => {
      // Fails once: the emitted event's warning names its parent too.
      if (++invoiced === 1) throw new Error("ledger locked");
    });
    await app.start();
    const id = await post(source.url, { n: 7 });
    await until(() => lines.some((l) => l.msg === "task run ended" && l.task === "invoice" && l.next === "done"));
    const about = lines.filter((l) => l.eventId === id);
    expect(about.map((l) => l.msg)).to.deep.equal(["event received", "task run started", "task run ended"]);
    const [received, started, ended] = about;
    expect(received).to.include({ level: DEBUG, source: "orders", eventId: id });
    expect(received.queues).to.deep.equal(["webhook:order"]);
    expect(started).to.include({ level: DEBUG, task: "order", attempt: 1 });
    expect(ended).to.include({ level: DEBUG, task: "order", attempt: 1, outcome: "success", next: "done" });
    expect(ended.durationMs).to.be.a("number");
    const [child] = ended.emitted as string[];
    expect(child).to.be.a("string").and.not.equal(id);
    const childLines = lines.filter((l) => l.eventId === child);
    expect(childLines.map((l) => `${l.level} ${l.msg}`)).to.deep.equal([
      `${DEBUG} event emitted`,
      `${DEBUG} task run started`,
      `${WARN} task failed; retrying`,
      `${DEBUG} task run ended`,
      `${DEBUG} task run started`,
      `${DEBUG} task run ended`,
    ]);
    for (const line of childLines) expect(line.parentId, line.msg).to.equal(id);
    expect(childLines[0]).to.include({ task: "order" });
    expect(childLines[0].queues).to.deep.equal(["invoices"]);
    expect(childLines[2]).to.include({ task: "invoice", attempt: 1 });
    expect(childLines[3]).to.include({ task: "invoice", outcome: "retry", next: "retry" });
    expect(childLines[5]).to.include({ task: "invoice", attempt: 2, outcome: "success", next: "done" });
  });

  it("retries (warn) and the dead letter (error) carry the event's id, between its debug run lines", async () => {
    const lines: Line[] = [];
    const app = newApp("follow", { logger: jsonLogger(lines, "debug") });
    const source = webhook({ path: "/fails" });
    app.task({ source, name: "broken", retry: { attempts: 2, initialDelayMs: 5 } }, async () => {
      throw new TypeError("no such customer");
    });
    await app.start();
    const id = await post(source.url, { n: 1 });
    await until(() => lines.some((l) => l.eventId === id && l.msg === "task run ended" && l.next === "dead_letter"));
    const about = lines.filter((l) => l.eventId === id).map((l) => `${l.level} ${l.msg}`);
    expect(about).to.deep.equal([
      `${DEBUG} event received`,
      `${DEBUG} task run started`,
      `${WARN} task failed; retrying`,
      `${DEBUG} task run ended`,
      `${DEBUG} task run started`,
      `${ERROR} task failed for the last time; the event is kept as a dead letter`,
      `${DEBUG} task run ended`,
    ]);
    const ends = lines.filter((l) => l.eventId === id && l.msg === "task run ended");
    expect(ends.map((l) => [l.attempt, l.outcome, l.next])).to.deep.equal([
      [1, "retry", "retry"],
      [2, "dead_letter", "dead_letter"],
    ]);
  });

  it("an event several tasks take: every line of each task's copy carries the 202's id, not the copy's", async () => {
    const lines: Line[] = [];
    const app = newApp("follow", { logger: jsonLogger(lines, "debug") });
    const source = webhook({ path: "/both" });
    app.task({ source, name: "audit" }, async () => undefined);
    app.task({ source, name: "mirror", retry: { attempts: 1 } }, async () => {
      throw new Error("mirror down");
    });
    await app.start();
    const id = await post(source.url, { n: 2 });
    await until(() => lines.filter((l) => l.msg === "task run ended").length === 2);
    const about = lines.filter((l) => l.eventId === id);
    expect(about.map((l) => `${String(l.task ?? "-")} ${l.msg}`).sort()).to.deep.equal(
      ["- event received", "audit task run started", "audit task run ended", "mirror task run started", "mirror task failed for the last time; the event is kept as a dead letter", "mirror task run ended"].sort(),
    );
    expect(about[0].queues).to.deep.equal(["webhook:audit", "webhook:mirror"]);
  });

  it("an event no task takes: one debug line with the 200's id says it was unrouted", async () => {
    const lines: Line[] = [];
    const app = newApp("follow", { logger: jsonLogger(lines, "debug") });
    const source = webhook({ path: "/pushes" });
    app.task({ source, name: "pushes", filter: (e) => (e as { body: { kind?: string } }).body.kind === "push" }, async () => undefined);
    await app.start();
    const reply = await fetch(source.url, { method: "POST", body: JSON.stringify({ kind: "star" }), headers: { "content-type": "application/json" } });
    expect(reply.status).to.equal(200);
    const { id } = (await reply.json()) as { id: string };
    await until(() => lines.some((l) => l.msg.includes("unrouted")));
    const [line] = lines.filter((l) => l.msg.includes("unrouted"));
    expect(line).to.include({ level: DEBUG, source: "pushes", msg: "event received; no task takes it (unrouted)" });
    expect(line.eventId).to.equal(id);
    expect(line.queues).to.deep.equal([]);
  });

  it("an event several tasks take: a failed write of a copy's outcome names the 202's id, not the copy's", async () => {
    const lines: Line[] = [];
    class RefusingRetries extends MemoryStore {
      override async retryLater(): Promise<void> {
        throw new Error("disk full");
      }
    }
    const app = newApp("follow", { logger: jsonLogger(lines, "warn"), store: new RefusingRetries() });
    const source = webhook({ path: "/refused" });
    app.task({ source, name: "audit" }, async () => undefined);
    app.task({ source, name: "mirror", retry: { attempts: 3 } }, async () => {
      throw new Error("mirror down");
    });
    await app.start();
    const id = await post(source.url, { n: 3 });
    await until(() => lines.some((l) => l.msg === "cannot record a task's outcome in the store"));
    const line = lines.find((l) => l.msg === "cannot record a task's outcome in the store")!;
    expect(line.eventId).to.equal(id);
  });

  it("above debug: no per-event line, and neither wrapper nor run hook is installed", async () => {
    const lines: Line[] = [];
    const logger = jsonLogger(lines, "info");
    const app = newApp("follow", { logger });
    const source = webhook({ path: "/quiet" });
    let ran = 0;
    app.task({ source, name: "quiet" }, async () => {
      ran++;
    });
    await app.start();
    await post(source.url, { n: 3 });
    await until(() => ran === 1);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(lines.filter((l) => typeof l.eventId === "string")).to.deep.equal([]);

    expect(debugEnabled(logger)).to.equal(false);
    expect(debugEnabled(silentLogger)).to.equal(false);
    expect(debugEnabled(jsonLogger([], "debug"))).to.equal(true);
    const observability = new AppObservability({}, logger, { queues: () => [], stats: () => undefined });
    expect(observability.observer?.onTaskStart).to.equal(undefined);
    expect(observability.observer?.parentOf).to.equal(undefined);
    const inbox = { name: "x", tasks: ["x"], dedupeNamespace: "x" } as unknown as Parameters<AppObservability["wrapInbox"]>[0];
    expect(observability.wrapInbox(inbox)).to.equal(inbox);
  });
});
