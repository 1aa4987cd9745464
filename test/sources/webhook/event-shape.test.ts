import { expect } from "chai";
import { startWebhook, useApps } from "../../helpers/app";
import { nodeRequest, send } from "../../helpers/http-client";
import { httpRequest, RawClient } from "../../helpers/raw-http";

describe("WebhookSource: the event a task receives", () => {
  const makeApp = useApps();

  it("has exactly the contract's keys and shapes", async () => {
    const { source, events } = await startWebhook(makeApp, { methods: ["POST", "PUT"] });
    const before = Date.now() / 1000;
    const client = await RawClient.connect(source.port);
    const body = '{"order":42,"items":["a","b"]}';
    await client.write(
      httpRequest(
        "PUT",
        "/hook?tag=a&tag=b&single=x%20y&empty=&plus=1+2",
        { Host: "example.test", "Content-Type": "application/json", "X-Event-ID": "evt-1", "X-MiXeD-CaSe": "Value Kept" },
        body,
      ),
    );
    const response = await client.readResponse();
    client.destroy();
    const after = Date.now() / 1000;
    expect(response.status).to.equal(202);
    const [{ event }] = await events.waitFor(1);
    expect(Object.keys(event).sort()).to.deep.equal(["body", "client", "headers", "method", "path", "query", "received_at"]);
    expect(event.body).to.deep.equal({ order: 42, items: ["a", "b"] });
    expect(event.method).to.equal("PUT");
    expect(event.path).to.equal("/hook");
    expect(event.query).to.deep.equal({ tag: ["a", "b"], single: "x y", empty: "", plus: "1 2" });
    expect(Object.getPrototypeOf(event.query)).to.equal(Object.prototype);
    expect(event.headers).to.include({
      host: "example.test",
      "content-type": "application/json",
      "x-event-id": "evt-1",
      "x-mixed-case": "Value Kept",
      "content-length": String(Buffer.byteLength(body)),
    });
    for (const name of Object.keys(event.headers)) expect(name).to.equal(name.toLowerCase());
    for (const value of Object.values(event.headers)) expect(value).to.be.a("string");
    expect(event.client).to.deep.equal(["127.0.0.1", client.localPort]);
    expect(event.received_at).to.be.a("number");
    expect(event.received_at).to.be.within(before - 0.001, after + 0.001);
  });

  it("received_at is seconds with a fractional part (millisecond precision)", async () => {
    const { source, events } = await startWebhook(makeApp);
    for (let i = 0; i < 4; i++) await send(source.url, { body: String(i), headers: { "content-type": "text/plain" } });
    const received = await events.waitFor(4);
    const stamps = received.map((r) => r.event.received_at);
    // Seconds, not milliseconds: within a day of now.
    for (const t of stamps) expect(Math.abs(t - Date.now() / 1000)).to.be.below(86_400);
    // At least one of four has a fraction (all four landing on a whole second is ~1e-12).
    expect(stamps.some((t) => !Number.isInteger(t))).to.equal(true);
  });

  it("has an empty query object without a query string, and with a bare '?'", async () => {
    const { source, events } = await startWebhook(makeApp);
    await send(source.url, { body: "{}", headers: { "content-type": "application/json" } });
    await send(`${source.url}?`, { body: "{}", headers: { "content-type": "application/json" } });
    const received = await events.waitFor(2);
    expect(received.map((r) => r.event.query)).to.deep.equal([{}, {}]);
    expect(received.map((r) => r.event.path)).to.deep.equal(["/hook", "/hook"]);
  });

  it("keeps every query parameter (no silent cap at 1000 keys)", async () => {
    const { source, events } = await startWebhook(makeApp);
    const query = Array.from({ length: 1200 }, (_, i) => `k${i}=${i}`).join("&");
    expect((await send(`${source.url}?${query}`, { body: "{}", headers: { "content-type": "application/json" } })).status).to.equal(202);
    const [{ event }] = await events.waitFor(1);
    expect(Object.keys(event.query)).to.have.length(1200);
    expect(event.query.k1199).to.equal("1199");
  });

  it("joins repeated request headers into one string", async () => {
    const { source, events } = await startWebhook(makeApp);
    const client = await RawClient.connect(source.port);
    await client.write("POST /hook HTTP/1.1\r\nHost: x\r\nX-Tag: one\r\nX-Tag: two\r\nContent-Length: 0\r\n\r\n");
    expect((await client.readResponse()).status).to.equal(202);
    client.destroy();
    const [{ event }] = await events.waitFor(1);
    expect(event.headers["x-tag"]).to.equal("one, two");
  });

  it("gives the task the event id that the 202 answer carries, and the exact raw bytes", async () => {
    const { source, events } = await startWebhook(makeApp);
    const body = Buffer.from('{ "a" :  1,\n  "b": "\u00e9" }\n', "utf8");
    const reply = await nodeRequest(source.url, { headers: { "content-type": "application/json", "content-length": body.length }, body });
    expect(reply.status).to.equal(202);
    const answer = reply.json();
    const [{ ctx, event }] = await events.waitFor(1);
    expect(answer).to.deep.equal({ accepted: true, id: ctx.eventId });
    expect(ctx.eventId).to.be.a("string").and.have.length.above(8);
    expect(Buffer.isBuffer(ctx.rawBody)).to.equal(true);
    expect(ctx.rawBody.equals(body)).to.equal(true);
    expect(event.body).to.deep.equal({ a: 1, b: "\u00e9" });
    expect(ctx.attempt).to.equal(1);
    expect(ctx.task).to.equal("receive");
  });
});
