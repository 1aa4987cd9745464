import { expect } from "chai";
import { request as httpRequest, Agent } from "node:http";
import { context, SpanKind, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { useApps, webhook } from "../helpers/app";
import { until } from "../helpers/wait";

/** Requests whose bodies arrive interleaved, on kept-alive connections: each task joins its own request's trace. */
describe("traces: no context crosses from one request to another", () => {
  const newApp = useApps();
  let exporter: InMemorySpanExporter;
  let provider: BasicTracerProvider;
  beforeEach(() => {
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

  it("interleaved slow bodies and reused connections: every task span's parent is its own request's span", async () => {
    const app = newApp("isolated");
    const source = webhook({ path: "/in" });
    app.task({ source, name: "t", concurrency: 8 }, () => undefined);
    await app.start();
    const url = new URL(source.url);
    const agent = new Agent({ keepAlive: true, maxSockets: 2 });
    const send = (n: number) =>
      new Promise<string>((resolve, reject) => {
        const traceId = n.toString(16).padStart(32, "a");
        const req = httpRequest(
          { host: url.hostname, port: url.port, path: url.pathname, method: "POST", agent, headers: { "content-type": "application/json", traceparent: `00-${traceId}-00f067aa0ba902b7-01` } },
          (res) => {
            res.resume();
            res.on("end", () => resolve(traceId));
          },
        );
        req.on("error", reject);
        req.write('{"n":');
        setTimeout(() => req.end(`${n}}`), 5 + ((n * 7) % 20));
      });
    const ids = await Promise.all(Array.from({ length: 12 }, (_, n) => send(n + 1)));
    agent.destroy();
    await until(() => exporter.getFinishedSpans().filter((s) => s.kind === SpanKind.CONSUMER).length === ids.length);
    const spans = exporter.getFinishedSpans();
    for (const task of spans.filter((s) => s.kind === SpanKind.CONSUMER)) {
      const parent = spans.find((s) => s.spanContext().spanId === task.parentSpanContext?.spanId);
      expect(parent?.kind, "a task span's parent is a request span").to.equal(SpanKind.SERVER);
      expect(task.spanContext().traceId).to.equal(parent!.spanContext().traceId);
    }
    expect(new Set(spans.filter((s) => s.kind === SpanKind.CONSUMER).map((s) => s.spanContext().traceId))).to.deep.equal(new Set(ids));
  });
});
