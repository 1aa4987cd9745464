import { randomBytes } from "node:crypto";
import { expect } from "chai";
import { Webhook as SvixWebhook } from "svix";
import { CoreApp, silentLogger, StandardWebhooksSignature, WebhookSource, type TaskContext, type WebhookEvent } from "../../src/index";
import { until } from "../helpers/wait";

describe("deduplication at the source", () => {
  let app: CoreApp;
  afterEach(async () => app?.stop());

  async function start(source: WebhookSource, handler: (ctx: TaskContext, e: WebhookEvent) => Promise<unknown>, maxQueued?: number) {
    app = new CoreApp("dedupe", { store: "memory", logger: silentLogger, maxQueued });
    app.task({ source, name: "t" }, handler);
    await app.start();
  }

  it("github preset: a repeated X-GitHub-Delivery is answered 200 duplicate with the first event's id, and makes no event", async () => {
    const source = new WebhookSource({ path: "/gh", port: 0, dedupe: "github" });
    const events: string[] = [];
    await start(source, async (ctx) => void events.push(ctx.eventId));
    const send = (delivery: string) =>
      fetch(source.url, { method: "POST", headers: { "x-github-delivery": delivery, "content-type": "application/json" }, body: "{}" });
    const first = await send("d-1");
    expect(first.status).to.equal(202);
    const { id } = (await first.json()) as { id: string };
    const again = await send("d-1");
    expect(again.status).to.equal(200);
    expect(await again.json()).to.deep.equal({ accepted: true, duplicate: true, id });
    expect((await send("d-2")).status).to.equal(202);
    await until(() => events.length === 2);
    await new Promise((r) => setTimeout(r, 30));
    expect(events).to.have.length(2);
    expect(events[0]).to.equal(id);
  });

  it("stripe preset reads the event id from the JSON body; copies sent at the same moment make one event", async () => {
    const source = new WebhookSource({ path: "/stripe", port: 0, dedupe: "stripe" });
    const events: unknown[] = [];
    await start(source, async (_ctx, e) => void events.push(e.body));
    const body = JSON.stringify({ id: "evt_123", type: "invoice.paid" });
    const answers = await Promise.all(
      Array.from({ length: 5 }, () => fetch(source.url, { method: "POST", headers: { "content-type": "application/json" }, body })),
    );
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses).to.deep.equal([200, 200, 200, 200, 202]);
    await until(() => events.length === 1);
    await new Promise((r) => setTimeout(r, 30));
    expect(events).to.have.length(1);
  });

  for (const preset of ["standard-webhooks", "svix"] as const) {
    it(`${preset} preset reads the id the signature covers: a replay with the other family's id added is a duplicate`, async () => {
      const secret = "whsec_" + randomBytes(32).toString("base64");
      const source = new WebhookSource({ path: "/sw", port: 0, auth: new StandardWebhooksSignature(secret), dedupe: preset });
      const events: string[] = [];
      await start(source, async (ctx) => void events.push(ctx.eventId));
      const body = JSON.stringify({ type: "invoice.paid" });
      const t = Math.floor(Date.now() / 1000);
      for (const family of ["svix", "webhook"]) {
        const other = family === "svix" ? "webhook" : "svix";
        const signed = { [`${family}-id`]: `msg_${family}`, [`${family}-timestamp`]: String(t), [`${family}-signature`]: new SvixWebhook(secret).sign(`msg_${family}`, new Date(t * 1000), body) };
        const send = (extra: Record<string, string>) => fetch(source.url, { method: "POST", headers: { "content-type": "application/json", ...signed, ...extra }, body });
        expect((await send({})).status).to.equal(202);
        // The other family's id is not signed: anyone replaying the delivery can set it.
        const replay = await send({ [`${other}-id`]: "msg_forged" });
        expect(replay.status, `${family}-signed replay`).to.equal(200);
        expect(((await replay.json()) as { duplicate?: boolean }).duplicate).to.equal(true);
      }
      await until(() => events.length === 2);
      await new Promise((r) => setTimeout(r, 30));
      expect(events).to.have.length(2);
    });
  }

  it("a request without the delivery id is not deduplicated", async () => {
    const source = new WebhookSource({ path: "/h", port: 0, dedupe: { header: "X-Delivery-Id" } });
    let count = 0;
    await start(source, async () => void count++);
    for (let i = 0; i < 3; i++) expect((await fetch(source.url, { method: "POST", body: "x" })).status).to.equal(202);
    await until(() => count === 3);
  });

  it("a delivery the store refused (503) is not remembered: the sender's retry is accepted", async () => {
    const source = new WebhookSource({ path: "/full", port: 0, dedupe: { header: "x-delivery-id" } });
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const seen: string[] = [];
    app = new CoreApp("dedupe-full", { store: "memory", logger: silentLogger, maxQueued: 1 });
    app.task({ source, name: "blocked", concurrency: 1 }, async (_ctx, e: WebhookEvent) => {
      seen.push(e.headers["x-delivery-id"]);
      await gate;
    });
    await app.start();
    const send = (id: string) => fetch(source.url, { method: "POST", headers: { "x-delivery-id": id }, body: "x" });
    expect((await send("a")).status).to.equal(202);
    const refused = await send("b");
    expect(refused.status).to.equal(503);
    expect(refused.headers.get("retry-after")).to.match(/^\d+$/);
    release();
    await until(() => seen.length === 1);
    let retry = await send("b");
    for (let i = 0; retry.status === 503 && i < 100; i++) {
      await new Promise((r) => setTimeout(r, 10));
      retry = await send("b");
    }
    expect(retry.status).to.equal(202);
    await until(() => seen.length === 2);
    expect(seen).to.deep.equal(["a", "b"]);
  });

  it("refuses a dedupe rule without a key source, or with an unknown preset", () => {
    expect(() => new WebhookSource({ path: "/x", dedupe: {} })).to.throw(/dedupe needs/);
    expect(() => new WebhookSource({ path: "/x", dedupe: "gitlab" as "github" })).to.throw(/dedupe.preset must be one of/);
    expect(() => new WebhookSource({ path: "/x", dedupe: { header: "x-id", ttlMs: 0 } })).to.throw(/ttlMs/);
  });
});

describe("deduplication with callers waiting for the task", () => {
  let app: CoreApp;
  afterEach(async () => app?.stop());

  for (const mode of [{ ack: "processed" as const }, { reply: "result" as const }]) {
    it(`${JSON.stringify(mode)}: a first attempt that fails answers 500 and the sender's retry is processed, not called a duplicate`, async () => {
      const source = new WebhookSource({ path: "/d", port: 0, dedupe: { header: "x-delivery-id" }, ...mode });
      let calls = 0;
      app = new CoreApp("dedupe-wait", { store: "memory", logger: silentLogger });
      app.task({ source, name: "flaky" }, async () => {
        if (++calls === 1) throw new Error("first attempt fails");
        return undefined;
      });
      await app.start();
      const send = () => fetch(source.url, { method: "POST", headers: { "x-delivery-id": "d-1" }, body: "x" });
      expect((await send()).status).to.equal(500);
      const retry = await send();
      expect(retry.status).to.equal(202);
      expect(await retry.json()).to.not.have.property("duplicate");
      expect(calls).to.equal(2);
      const third = await send();
      expect(third.status).to.equal(200);
      expect(await third.json()).to.deep.include({ duplicate: true });
    });
  }
});

describe("ack 'received' and a queue that fills while bodies are read", () => {
  let app: CoreApp;
  afterEach(async () => app?.stop());

  it("answers 503 to the requests the store cannot take, never 202", async () => {
    const net = await import("node:net");
    const source = new WebhookSource({ path: "/r", port: 0, ack: "received" });
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    app = new CoreApp("late-admit", { store: "memory", logger: silentLogger, maxQueued: 5 });
    app.task({ source, name: "blocked", concurrency: 1 }, async () => gate);
    await app.start();
    // 20 clients send their headers first (all admitted), then their bodies.
    const sockets = await Promise.all(
      Array.from({ length: 20 }, () => new Promise<import("node:net").Socket>((resolve) => {
        const socket = net.connect(source.port, "127.0.0.1", () => resolve(socket));
      })),
    );
    const answers = sockets.map((socket) => new Promise<number>((resolve) => {
      let text = "";
      socket.on("data", (chunk) => {
        text += chunk.toString();
        const match = /^HTTP\/1\.1 (\d{3})/.exec(text);
        if (match) resolve(Number(match[1]));
      });
    }));
    for (const socket of sockets) socket.write("POST /r HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\n");
    await new Promise((r) => setTimeout(r, 50));
    for (const socket of sockets) socket.write("x");
    const codes = await Promise.all(answers);
    for (const socket of sockets) socket.destroy();
    release();
    expect(codes.filter((c) => c === 202).length).to.equal(5);
    expect(codes.filter((c) => c === 503).length).to.equal(15);
  });
});
