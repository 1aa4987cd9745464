import { expect } from "chai";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { context, SpanKind, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { MemoryStore, StoreRefusedError } from "../../src/index";
import { useApps, webhook } from "../helpers/app";
import { postJson } from "../helpers/http-client";
import { until } from "../helpers/wait";
import { startChild } from "../e2e/child-app";

const INCOMING_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const INCOMING_PARENT = "00f067aa0ba902b7";

describe("traces (OpenTelemetry)", () => {
  const newApp = useApps();
  let exporter: InMemorySpanExporter;
  let provider: BasicTracerProvider;

  beforeEach(() => {
    // A new one each time: shutting the provider down stops its exporter for good.
    exporter = new InMemorySpanExporter();
    provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    trace.setGlobalTracerProvider(provider);
  });
  afterEach(async () => {
    trace.disable();
    context.disable();
    await provider.shutdown();
  });

  const spans = (): ReadableSpan[] => exporter.getFinishedSpans();

  it("the request span, the task span and the next task's span share one trace; attributes as the conventions name them", async () => {
    const app = newApp("traced");
    const source = webhook({ path: "/hooks/in" });
    app.task({ source, name: "first", emit: "next" }, () => ({ forwarded: true }));
    app.task({ source: "next", name: "second" }, () => undefined);
    await app.start();
    const reply = await postJson(source.url, { a: 1 });
    const { id } = reply.json<{ id: string }>();
    await until(() => spans().length === 3);
    const request = spans().find((s) => s.kind === SpanKind.SERVER)!;
    const first = spans().find((s) => s.attributes["webhook_tasks.task"] === "first")!;
    const second = spans().find((s) => s.attributes["webhook_tasks.task"] === "second")!;
    expect(request.name).to.equal("POST /hooks/in");
    expect(request.attributes).to.include({ "http.request.method": "POST", "http.route": "/hooks/in", "http.response.status_code": 202 });
    expect(first.kind).to.equal(SpanKind.CONSUMER);
    expect(first.name).to.equal("process webhook:first");
    expect(first.attributes).to.include({ "messaging.system": "webhook-tasks", "messaging.destination.name": "webhook:first", "messaging.message.id": id, "messaging.operation.type": "process" });
    expect(second.attributes).to.include({ "messaging.destination.name": "next", "messaging.operation.type": "process" });
    const traceId = request.spanContext().traceId;
    expect(first.spanContext().traceId).to.equal(traceId);
    expect(second.spanContext().traceId).to.equal(traceId);
    expect(first.parentSpanContext?.spanId).to.equal(request.spanContext().spanId);
    expect(second.parentSpanContext?.spanId).to.equal(first.spanContext().spanId);
  });

  it("keeps the trace id of an incoming traceparent", async () => {
    const app = newApp("traced-parent");
    const source = webhook({ path: "/hooks/in" });
    app.task({ source, name: "only" }, () => undefined);
    await app.start();
    await postJson(source.url, {}, { traceparent: `00-${INCOMING_TRACE}-${INCOMING_PARENT}-01` });
    await until(() => spans().length === 2);
    for (const span of spans()) expect(span.spanContext().traceId).to.equal(INCOMING_TRACE);
    expect(spans().find((s) => s.kind === SpanKind.SERVER)!.parentSpanContext?.spanId).to.equal(INCOMING_PARENT);
  });

  it("an SDK registered after the app started is honoured from the next request on", async () => {
    trace.disable();
    const app = newApp("traced-later");
    const source = webhook({ path: "/hooks/in" });
    let runs = 0;
    app.task({ source, name: "only" }, () => {
      runs++;
    });
    await app.start();
    expect((await postJson(source.url, { before: true })).status).to.equal(202);
    await until(() => runs === 1);
    trace.setGlobalTracerProvider(provider);
    await postJson(source.url, { after: true }, { traceparent: `00-${INCOMING_TRACE}-${INCOMING_PARENT}-01` });
    await until(() => runs === 2 && spans().length === 2);
    expect(spans().map((s) => s.kind).sort()).to.deep.equal([SpanKind.SERVER, SpanKind.CONSUMER].sort());
    for (const span of spans()) expect(span.spanContext().traceId).to.equal(INCOMING_TRACE);
  });

  it("a failed run's span has an error status and the exception", async () => {
    const app = newApp("traced-error");
    const source = webhook({ path: "/hooks/in" });
    app.task({ source, name: "broken", retry: { attempts: 1 } }, () => {
      throw new Error("cannot");
    });
    await app.start();
    await postJson(source.url, {});
    await until(() => spans().length === 2);
    const run = spans().find((s) => s.kind === SpanKind.CONSUMER)!;
    expect(run.status.code).to.equal(2); // ERROR
    expect(run.events.map((e) => e.name)).to.include("exception");
    expect(run.attributes["webhook_tasks.outcome"]).to.equal("dead_letter");
  });

  it("a run whose outcome the store cannot record still ends its span, with the store's error and no outcome", async () => {
    const store = new (class extends MemoryStore {
      override completeNow(): void {
        throw new StoreRefusedError({ code: "store_unavailable", message: "the disk is gone for a moment", retryAfterSeconds: 1 });
      }
    })();
    const app = newApp("traced-unrecorded", { store });
    const source = webhook({ path: "/hooks/in" });
    let runs = 0;
    app.task({ source, name: "only" }, () => {
      runs++;
    });
    await app.start();
    await postJson(source.url, {});
    await until(() => runs === 1 && spans().some((s) => s.kind === SpanKind.CONSUMER));
    const run = spans().find((s) => s.kind === SpanKind.CONSUMER)!;
    expect(run.status.code).to.equal(2); // ERROR
    expect(run.status.message).to.include("the disk is gone for a moment");
    expect(run.attributes["webhook_tasks.outcome"]).to.equal(undefined);
    expect(run.parentSpanContext?.spanId).to.equal(spans().find((s) => s.kind === SpanKind.SERVER)!.spanContext().spanId);
  });

  it("a debounced group whose outcome the store cannot record still ends its span, with the store's error and no outcome", async () => {
    const store = new (class extends MemoryStore {
      override completeGroup(): Promise<void> {
        return Promise.reject(new StoreRefusedError({ code: "store_unavailable", message: "the disk is gone for a moment", retryAfterSeconds: 1 }));
      }
    })();
    const app = newApp("traced-group-unrecorded", { store });
    const source = webhook({ path: "/hooks/in" });
    let runs = 0;
    app.task({ source, name: "latest", debounce: { periodMs: 20 } }, () => {
      runs++;
    });
    await app.start();
    await postJson(source.url, {});
    await until(() => runs >= 1 && spans().some((s) => s.kind === SpanKind.CONSUMER));
    const run = spans().find((s) => s.kind === SpanKind.CONSUMER)!;
    expect(run.status.code).to.equal(2); // ERROR
    expect(run.status.message).to.include("the disk is gone for a moment");
    expect(run.attributes["webhook_tasks.outcome"]).to.equal(undefined);
  });

  it("the trace continues after a restart between ingest and processing (embedded store, two processes)", async function () {
    this.timeout(40_000);
    const dir = mkdtempSync(join(tmpdir(), "traced-"));
    const script = join(__dirname, "fixtures/traced-app.js");
    try {
      const ingest = await startChild(script, { MODE: "ingest", DATA_DIR: dir });
      let out = "";
      ingest.child.stdout!.on("data", (c: Buffer) => (out += c.toString()));
      const reply = await postJson(`${ingest.base}/in`, { n: 1 }, { traceparent: `00-${INCOMING_TRACE}-${INCOMING_PARENT}-01` });
      expect(reply.status).to.equal(202);
      await until(() => out.includes('"kind":1'), 10_000); // the server span was exported
      await ingest.kill("SIGKILL");
      const request = spanLines(out).find((s) => s.kind === SpanKind.SERVER)!;
      expect(request.traceId).to.equal(INCOMING_TRACE);
      expect(spanLines(out).some((s) => s.kind === SpanKind.CONSUMER)).to.equal(false);

      const processing = await startChild(script, { MODE: "process", DATA_DIR: dir });
      let out2 = "";
      processing.child.stdout!.on("data", (c: Buffer) => (out2 += c.toString()));
      try {
        await until(() => spanLines(out2).filter((s) => s.kind === SpanKind.CONSUMER).length === 2, 15_000);
      } finally {
        await processing.kill("SIGTERM");
      }
      const [first, second] = ["first", "second"].map((task) => spanLines(out2).find((s) => s.attributes["webhook_tasks.task"] === task)!);
      expect(first.traceId).to.equal(INCOMING_TRACE);
      expect(first.parentSpanId).to.equal(request.spanId);
      expect(second.traceId).to.equal(INCOMING_TRACE);
      expect(second.parentSpanId).to.equal(first.spanId);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

interface SpanLine {
  name: string;
  kind: number;
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  attributes: Record<string, unknown>;
}

function spanLines(out: string): SpanLine[] {
  return out
    .split("\n")
    .filter((l) => l.startsWith("SPAN "))
    .map((l) => JSON.parse(l.slice(5)) as SpanLine);
}
