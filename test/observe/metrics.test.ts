import { expect } from "chai";
import { collectDefaultMetrics, Registry } from "prom-client";
import { BearerAuth, MemoryStore, PermanentError, WebhookError, type CoreApp } from "../../src/index";
import { useApps, webhook } from "../helpers/app";
import { postJson, send } from "../helpers/http-client";
import { parseExposition, type Exposition } from "../helpers/prometheus";
import { until } from "../helpers/wait";

const FAST_RETRY = { initialDelayMs: 5, maxDelayMs: 5, factor: 1 };

/** A memory store that says it cannot write while `broken` is set, as a failing engine does. */
class BreakableStore extends MemoryStore {
  broken: Error | undefined;
  get failure(): Error | undefined {
    return this.broken;
  }
}

async function scrape(url: string): Promise<Exposition> {
  const reply = await fetch(url);
  expect(reply.status).to.equal(200);
  expect(reply.headers.get("content-type")).to.match(/^text\/plain; version=0\.0\.4/);
  return parseExposition(await reply.text());
}

describe("metrics (/metrics, prom-client)", () => {
  const newApp = useApps();

  it("counts requests, task runs and queues exactly, after a known sequence", async () => {
    const app = newApp("metrics-app", { metrics: true });
    const plain = webhook({ path: "/plain", dedupe: { header: "x-delivery" } });
    const guarded = webhook({ path: "/guarded", auth: new BearerAuth("s3cret-token"), maxBodyBytes: 64 });
    const flaky = webhook({ path: "/flaky" });
    const doomed = webhook({ path: "/doomed" });
    const slow = webhook({ path: "/slow" });
    let flakyCalls = 0;
    app.task({ source: plain, name: "plain" }, () => undefined);
    app.task({ source: guarded, name: "guarded" }, () => undefined);
    app.task({ source: flaky, name: "flaky", retry: { attempts: 5, ...FAST_RETRY } }, () => {
      if (++flakyCalls <= 2) throw new Error("not yet");
    });
    app.task({ source: doomed, name: "doomed", retry: { attempts: 2, ...FAST_RETRY } }, () => {
      throw new Error("never works");
    });
    app.task({ source: slow, name: "slow", timeoutMs: 50, retry: { attempts: 1 } }, () => new Promise(() => undefined));
    const answering = webhook({ path: "/answering", reply: "result" });
    app.task({ source: answering, name: "answering" }, () => {
      throw new WebhookError(422, "order_unknown", "no such order");
    });
    await app.start();

    expect((await postJson(plain.url, { n: 1 }, { "x-delivery": "d1" })).status).to.equal(202);
    expect((await postJson(plain.url, { n: 1 }, { "x-delivery": "d1" })).status).to.equal(200);
    expect((await postJson(guarded.url, { n: 2 }, { authorization: "Bearer wrong" })).status).to.equal(401);
    expect((await postJson(guarded.url, { big: "x".repeat(200) }, { authorization: "Bearer s3cret-token" })).status).to.equal(413);
    expect((await postJson(flaky.url, {})).status).to.equal(202);
    expect((await postJson(doomed.url, {})).status).to.equal(202);
    expect((await postJson(slow.url, {})).status).to.equal(202);
    expect((await postJson(answering.url, {})).status).to.equal(422);
    expect((await send(`${new URL(plain.url).origin}/nowhere/42`)).status).to.equal(404);
    await until(async () => (await app.deadLetters.list()).length === 2 && flakyCalls === 3);

    const origin = new URL(plain.url).origin;
    let metrics = await scrape(`${origin}/metrics`);
    await until(async () => {
      metrics = await scrape(`${origin}/metrics`);
      return metrics.samples("webhook_task_runs_total", { task: "flaky", outcome: "success" }).length === 1;
    });
    const requests = (labels: Record<string, string>) => metrics.value("webhook_requests_total", labels);
    expect(requests({ source: "plain", status: "202", code: "accepted" })).to.equal(1);
    expect(requests({ source: "plain", status: "200", code: "duplicate" })).to.equal(1);
    expect(requests({ source: "guarded", status: "401", code: "unauthorized" })).to.equal(1);
    expect(requests({ source: "guarded", status: "413", code: "body_too_large" })).to.equal(1);
    expect(requests({ source: "", status: "404", code: "not_found" })).to.equal(1);
    // A task's WebhookError answer is labelled with the error's own code.
    expect(requests({ source: "answering", status: "422", code: "order_unknown" })).to.equal(1);
    // The unknown path is nowhere in the labels.
    expect(metrics.samples("webhook_requests_total").every((s) => !Object.values(s.labels).some((v) => v.includes("nowhere")))).to.equal(true);
    expect(metrics.value("webhook_request_duration_seconds_count", { source: "plain" })).to.equal(2);

    const runs = (task: string, outcome: string) => metrics.samples("webhook_task_runs_total", { task, outcome }).reduce((sum, s) => sum + s.value, 0);
    expect(runs("flaky", "retry")).to.equal(2);
    expect(runs("flaky", "success")).to.equal(1);
    expect(runs("doomed", "retry")).to.equal(1);
    expect(runs("doomed", "dead_letter")).to.equal(1);
    expect(runs("slow", "timeout")).to.equal(1);
    expect(runs("plain", "success")).to.equal(1);
    expect(metrics.value("webhook_task_duration_seconds_count", { task: "flaky" })).to.equal(3);

    expect(metrics.value("webhook_dead_letters", { queue: "webhook:doomed" })).to.equal(1);
    expect(metrics.value("webhook_dead_letters", { queue: "webhook:slow" })).to.equal(1);
    expect(metrics.value("webhook_queue_depth", { queue: "webhook:plain" })).to.equal(0);
    expect(metrics.value("webhook_queue_oldest_age_seconds", { queue: "webhook:plain" })).to.equal(0);
    expect(metrics.value("webhook_store_write_duration_seconds_count", { engine: "memory" })).to.be.greaterThan(5);
    expect(metrics.family("process_cpu_user_seconds_total").type).to.equal("counter");
    expect(metrics.family("webhook_request_duration_seconds").type).to.equal("histogram");
  });

  it("labels requests with the source, once per request, and task runs with each task a source feeds", async () => {
    const app = newApp("metrics-fan-out", { metrics: true });
    const org = webhook({ path: "/hooks/org" });
    app.task({ source: org, name: "pushes", filter: (e) => (e.body as { kind: string }).kind === "push" }, () => undefined);
    app.task({ source: org, name: "audit", filter: (e) => (e.body as { kind: string }).kind !== "star" }, () => undefined);
    await app.start();
    for (const kind of ["push", "issue", "star"]) await postJson(org.url, { kind });
    const origin = new URL(org.url).origin;
    let metrics = await scrape(`${origin}/metrics`);
    await until(async () => {
      metrics = await scrape(`${origin}/metrics`);
      return metrics.samples("webhook_task_runs_total", { task: "audit", outcome: "success" }).some((s) => s.value === 2);
    });
    expect(metrics.value("webhook_requests_total", { source: "hooks/org", status: "202", code: "accepted" })).to.equal(2);
    expect(metrics.value("webhook_requests_total", { source: "hooks/org", status: "200", code: "unrouted" })).to.equal(1);
    expect(metrics.value("webhook_task_runs_total", { task: "pushes", outcome: "success" })).to.equal(1);
    expect(metrics.value("webhook_task_runs_total", { task: "audit", outcome: "success" })).to.equal(2);
    expect(metrics.value("webhook_queue_depth", { queue: "webhook:pushes" })).to.equal(0);
  });

  it("webhook_store_up is 1 while the store takes writes, 0 while it cannot, and has no sample after stop; webhook_task_paused follows pause and resume", async () => {
    const store = new BreakableStore();
    const app = newApp("metrics-store-up", { metrics: true, store });
    const source = webhook({ path: "/up" });
    app.task({ source, name: "up" }, () => undefined);
    await app.start();
    const url = `${new URL(source.url).origin}/metrics`;
    expect((await scrape(url)).value("webhook_store_up", { engine: "memory" })).to.equal(1);
    store.broken = new Error("the disk is gone");
    expect((await scrape(url)).value("webhook_store_up", { engine: "memory" })).to.equal(0);
    store.broken = undefined;
    expect((await scrape(url)).value("webhook_store_up", { engine: "memory" })).to.equal(1);
    // A paused task's backlog is not stuck: the gauge says why nothing runs.
    expect((await scrape(url)).value("webhook_task_paused", { task: "up" })).to.equal(0);
    await app.pause("up");
    expect((await scrape(url)).value("webhook_task_paused", { task: "up" })).to.equal(1);
    await app.resume("up");
    expect((await scrape(url)).value("webhook_task_paused", { task: "up" })).to.equal(0);
    await app.stop();
    expect((await app.metrics!.getSingleMetric("webhook_store_up")?.get())?.values).to.deep.equal([]);
  });

  it("gauges a waiting queue's depth and age; serves on its own port with a given registry", async () => {
    const registry = new Registry();
    const app: CoreApp = newApp("metrics-own-port", { metrics: { host: "127.0.0.2", port: 0, path: "/prom", registry, defaultMetrics: false } });
    const source = webhook({ path: "/in" });
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    app.task({ source, name: "gated", concurrency: 1 }, () => gate);
    await app.start();
    expect(app.metrics).to.equal(registry);
    for (let i = 0; i < 3; i++) expect((await postJson(source.url, { i })).status).to.equal(202);
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const status = await app.status();
    expect(status.queues.find((q) => q.queue === "webhook:gated")).to.include({ depth: 3, waiting: 2, inFlight: 1 });
    const metrics = await scrape(await findMetricsUrl(app, source.url));
    expect(metrics.value("webhook_queue_depth", { queue: "webhook:gated" })).to.equal(3);
    expect(metrics.value("webhook_queue_oldest_age_seconds", { queue: "webhook:gated" })).to.be.within(1, 5);
    expect(metrics.families.has("process_cpu_user_seconds_total")).to.equal(false);
    release();
  });

  it("throws PermanentError to the dead letters on the first failure", async () => {
    const app = newApp("permanent", { metrics: true });
    const source = webhook({ path: "/p" });
    let calls = 0;
    app.task({ source, name: "permanent", retry: { attempts: 5, ...FAST_RETRY } }, () => {
      calls++;
      throw new PermanentError("unknown customer");
    });
    const letters: unknown[] = [];
    app.on("deadLetter", (payload) => void letters.push(payload));
    await app.start();
    await postJson(source.url, {});
    await until(async () => (await app.deadLetters.list()).length === 1 && letters.length === 1);
    expect(calls).to.equal(1);
    const [letter] = await app.deadLetters.list();
    expect(letter.attempts).to.equal(1);
    expect(letter.message.lastError).to.match(/^PermanentError: unknown customer\n\s+at /);
    expect(letters[0]).to.deep.include({ task: "permanent", attempts: 1, outcome: "dead_letter" });
  });

  it("counts the runs of an event whose body cannot be rebuilt from its raw bytes, and tells the retry and deadLetter listeners", async () => {
    const app = newApp("metrics-unrevivable", { metrics: true });
    const source = webhook({ path: "/raw" });
    let calls = 0;
    app.task({ source, name: "raw", retry: { attempts: 2, ...FAST_RETRY } }, () => {
      calls++;
    });
    const told: string[] = [];
    app.on("retry", () => void told.push("retry"));
    app.on("deadLetter", () => void told.push("deadLetter"));
    await app.start();
    // Stored without its parsed body, as the engines keep webhook events; its raw bytes no longer parse
    // (the source's parser changed between restarts, say).
    const payload = { headers: { "content-type": "application/json" }, query: {}, method: "POST", path: "/raw", client: ["127.0.0.1"], received_at: Date.now() / 1000 };
    await app.store.enqueue("webhook:raw", { id: "unrevivable-1", payload, raw: Buffer.from("{not json"), bodyFromRaw: true, attempts: 0, enqueuedAt: Date.now() });
    await until(async () => (await app.deadLetters.list()).length === 1);
    await until(() => told.length === 2);
    const metrics = await scrape(`${new URL(source.url).origin}/metrics`);
    expect(calls).to.equal(0);
    expect(metrics.value("webhook_task_runs_total", { task: "raw", outcome: "retry" })).to.equal(1);
    expect(metrics.value("webhook_task_runs_total", { task: "raw", outcome: "dead_letter" })).to.equal(1);
    expect(told).to.deep.equal(["retry", "deadLetter"]);
  });

  it("takes a registry that already has prom-client's default metrics without registering them twice", async () => {
    const registry = new Registry();
    collectDefaultMetrics({ register: registry });
    const app = newApp("metrics-collected-registry", { metrics: { registry } });
    const source = webhook({ path: "/in" });
    app.task({ source, name: "in" }, () => undefined);
    await app.start();
    const metrics = await scrape(`${new URL(source.url).origin}/metrics`);
    expect(metrics.family("process_cpu_user_seconds_total").type).to.equal("counter");
    expect(metrics.family("webhook_requests_total").type).to.equal("counter");
  });

  it("refuses a registry another app already registered its metrics in, saying how to give each app its own", () => {
    const registry = new Registry();
    newApp("metrics-first", { metrics: { registry } });
    expect(() => newApp("metrics-second", { metrics: { registry } })).to.throw(/two apps cannot share one Registry.*leave out metrics\.registry/);
    // Each app with a registry of its own is fine.
    newApp("metrics-third", { metrics: true });
    newApp("metrics-fourth", { metrics: true });
  });
});

/** The metrics listener is the one whose origin is not the sources'. */
async function findMetricsUrl(app: CoreApp, sourceUrl: string): Promise<string> {
  const status = await fetch(`${new URL(sourceUrl).origin}/prom`);
  expect(status.status).to.equal(404); // not served on the sources' listener
  const started = (app as unknown as { listeners: { all(): Array<{ origin: string }> } }).listeners.all().map((l) => l.origin);
  const other = started.find((origin) => !sourceUrl.startsWith(origin));
  if (other === undefined) throw new Error("no metrics listener");
  return `${other}/prom`;
}
