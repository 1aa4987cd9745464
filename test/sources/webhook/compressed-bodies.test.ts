import { randomBytes } from "node:crypto";
import { brotliCompressSync, deflateSync, gzipSync } from "node:zlib";
import { expect } from "chai";
import { Webhook as StandardWebhook } from "standardwebhooks";
import { StandardWebhooksSignature } from "../../../src/index";
import { sleep, startWebhook, useApps } from "../../helpers/app";
import { nodeRequest } from "../../helpers/http-client";
import { chunked, httpRequest, RawClient, rawRequest } from "../../helpers/raw-http";

const PAYLOAD = JSON.stringify({ type: "order.paid", items: Array.from({ length: 50 }, (_, i) => ({ sku: `sku-${i}`, name: "Grüße 🎉" })) });

describe("WebhookSource: compressed bodies (Content-Encoding)", () => {
  const makeApp = useApps();

  const encoders = { gzip: gzipSync, "x-gzip": gzipSync, deflate: deflateSync, br: brotliCompressSync } as const;
  for (const [encoding, encode] of Object.entries(encoders)) {
    it(`decodes ${encoding}: the event's body, ctx.rawBody and the stored raw bytes are the decoded payload`, async () => {
      const { source, events } = await startWebhook(makeApp);
      const wire = encode(Buffer.from(PAYLOAD));
      const reply = await nodeRequest(source.url, { headers: { "content-type": "application/json", "content-encoding": encoding }, body: wire });
      expect(reply.status, reply.body.toString()).to.equal(202);
      const [{ event, ctx }] = await events.waitFor(1);
      expect(event.body).to.deep.equal(JSON.parse(PAYLOAD));
      expect(ctx.rawBody.toString("utf8")).to.equal(PAYLOAD);
      // Headers are kept as they arrived: they say how the body travelled.
      expect(event.headers["content-encoding"]).to.equal(encoding);
    });
  }

  it("decodes a gzip body sent chunked, in pieces over time", async () => {
    const { source, events } = await startWebhook(makeApp);
    const wire = gzipSync(Buffer.from(PAYLOAD));
    const head = httpRequest("POST", "/hook", { "Content-Type": "application/json", "Content-Encoding": "gzip", "Transfer-Encoding": "chunked" });
    const body = chunked(wire.subarray(0, 10), wire.subarray(10, 100), wire.subarray(100));
    const response = await rawRequest(source.port, [head, body.subarray(0, 30), 30, body.subarray(30)]);
    expect(response.status).to.equal(202);
    expect((await events.waitFor(1))[0].event.body).to.deep.equal(JSON.parse(PAYLOAD));
  });

  it("accepts identity (and no header) as they are", async () => {
    const { source, events } = await startWebhook(makeApp);
    expect((await nodeRequest(source.url, { headers: { "content-type": "application/json", "content-encoding": "identity" }, body: PAYLOAD })).status).to.equal(202);
    expect((await events.waitFor(1))[0].event.body).to.deep.equal(JSON.parse(PAYLOAD));
  });

  it("takes an empty body with a Content-Encoding as empty", async () => {
    const { source, events } = await startWebhook(makeApp, { parser: "raw" });
    expect((await nodeRequest(source.url, { headers: { "content-encoding": "gzip", "content-length": 0 } })).status).to.equal(202);
    const chunkedEmpty = await rawRequest(source.port, Buffer.concat([httpRequest("POST", "/hook", { "Content-Encoding": "br", "Transfer-Encoding": "chunked" }), chunked()]));
    expect(chunkedEmpty.status).to.equal(202);
    expect((await events.waitFor(2)).map((r) => (r.event.body as Buffer).length)).to.deep.equal([0, 0]);
  });

  it("decodes a list of codings in reverse order (gzip, then br)", async () => {
    const { source, events } = await startWebhook(makeApp, { parser: "text" });
    const wire = brotliCompressSync(gzipSync(Buffer.from("twice")));
    expect((await nodeRequest(source.url, { headers: { "content-type": "text/plain", "content-encoding": "gzip, br" }, body: wire })).status).to.equal(202);
    expect((await events.waitFor(1))[0].event.body).to.equal("twice");
  });

  it("refuses an unknown coding with 415 naming it, before reading the body", async () => {
    const { source, events } = await startWebhook(makeApp);
    const client = await RawClient.connect(source.port);
    await client.write(httpRequest("POST", "/hook", { "Content-Type": "application/json", "Content-Encoding": "zstd", "Content-Length": 1_000 }));
    const response = await client.readResponse(1_000);
    client.destroy();
    expect(response.status).to.equal(415);
    expect(response.json().error).to.equal("unsupported_encoding");
    expect(response.json().message).to.include('"zstd"');
    await sleep(30);
    expect(events.count).to.equal(0);
  });

  it("refuses a body that does not decode as its coding with 400, and makes no event", async () => {
    const { source, events } = await startWebhook(makeApp);
    // Fixed bytes, not random ones: a random buffer is now and then a valid (empty) brotli stream.
    const notCompressed = Buffer.from("this is not compressed at all, just text");
    for (const encoding of ["gzip", "deflate", "br"]) {
      const reply = await nodeRequest(source.url, { headers: { "content-type": "application/json", "content-encoding": encoding }, body: notCompressed });
      expect(reply.status, encoding).to.equal(400);
      expect(reply.json().error, encoding).to.equal("invalid_encoding");
    }
    const truncated = gzipSync(Buffer.from(PAYLOAD)).subarray(0, 40);
    const reply = await nodeRequest(source.url, { headers: { "content-type": "application/json", "content-encoding": "gzip" }, body: truncated });
    expect(reply.status).to.equal(400);
    await sleep(30);
    expect(events.count).to.equal(0);
  });

  it("a decompression bomb (100 MiB of zeros, limit 1 MiB) gets 413 quickly, never inflating much past the limit", async () => {
    const { source, events } = await startWebhook(makeApp, { maxBodyBytes: 1024 * 1024, parser: "raw" });
    const bomb = gzipSync(Buffer.alloc(100 * 1024 * 1024), { level: 9 });
    expect(bomb.length).to.be.below(200 * 1024);
    global.gc?.();
    const before = process.memoryUsage().arrayBuffers;
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().arrayBuffers)), 2);
    const started = Date.now();
    const reply = await nodeRequest(source.url, { headers: { "content-type": "application/octet-stream", "content-encoding": "gzip" }, body: bomb });
    const elapsed = Date.now() - started;
    clearInterval(sampler);
    expect(reply.status).to.equal(413);
    expect(reply.json().error).to.equal("body_too_large");
    expect(elapsed, `${elapsed} ms`).to.be.below(1_000);
    expect(peak - before, `${peak - before} bytes of buffers at the peak`).to.be.below(16 * 1024 * 1024);
    await sleep(30);
    expect(events.count).to.equal(0);
  });

  it("a chunked gzip stream that decodes to nothing (empty deflate blocks) gets 413 once its coded bytes pass the limit, not at the request timeout", async () => {
    const { source, events } = await startWebhook(makeApp, { maxBodyBytes: 64 * 1024, parser: "raw" });
    const client = await RawClient.connect(source.port);
    try {
      await client.write(httpRequest("POST", "/hook", { "Content-Encoding": "gzip", "Transfer-Encoding": "chunked" }));
      // A gzip header, then empty stored blocks (what a sync flush writes): valid, and no output.
      const empty = Buffer.from([0x00, 0x00, 0x00, 0xff, 0xff]);
      const piece = Buffer.concat(Array.from({ length: 6_000 }, () => empty));
      const send = (bytes: Buffer) => client.socket.write(chunked(bytes).subarray(0, -5)); // no last-chunk marker
      send(Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3]));
      let sent = 0;
      // 2 MiB at most: with the coded bytes unbounded the server reads them all and answers nothing.
      while (sent < 2 * 1024 * 1024 && client.pending.length === 0 && !client.closed) {
        send(piece);
        sent += piece.length;
        await sleep(1);
      }
      const reply = await client.readResponse(3_000);
      expect(reply.status).to.equal(413);
      expect(reply.json().error).to.equal("body_too_large");
      expect(sent, `${sent} bytes sent before the answer`).to.be.below(1024 * 1024);
      expect(events.count).to.equal(0);
    } finally {
      client.destroy();
    }
  });

  it("the limit applies to the decoded size: a small gzip body inflating past it is 413", async () => {
    const { source } = await startWebhook(makeApp, { maxBodyBytes: 1000, parser: "raw" });
    const wire = gzipSync(Buffer.alloc(1001, 0x61));
    expect(wire.length).to.be.below(100);
    expect((await nodeRequest(source.url, { headers: { "content-encoding": "gzip" }, body: wire })).status).to.equal(413);
    const fits = gzipSync(Buffer.alloc(1000, 0x61));
    expect((await nodeRequest(source.url, { headers: { "content-encoding": "gzip" }, body: fits })).status).to.equal(202);
  });

  it("a signed delivery sent gzipped verifies: the signature covers the uncompressed payload", async () => {
    const secret = "whsec_" + randomBytes(32).toString("base64");
    const { source, events } = await startWebhook(makeApp, { auth: new StandardWebhooksSignature(secret) });
    const seconds = Math.floor(Date.now() / 1000);
    const signature = new StandardWebhook(secret).sign("msg_1", new Date(seconds * 1000), PAYLOAD);
    const headers = { "content-type": "application/json", "content-encoding": "gzip", "webhook-id": "msg_1", "webhook-timestamp": String(seconds), "webhook-signature": signature };
    const reply = await nodeRequest(source.url, { headers, body: gzipSync(Buffer.from(PAYLOAD)) });
    expect(reply.status, reply.body.toString()).to.equal(202);
    const [{ event, ctx }] = await events.waitFor(1);
    expect(event.body).to.deep.equal(JSON.parse(PAYLOAD));
    expect(ctx.rawBody.toString("utf8")).to.equal(PAYLOAD);
    // The same signature over the compressed bytes is not what senders sign: refused.
    const wrong = new StandardWebhook(secret).sign("msg_2", new Date(seconds * 1000), gzipSync(Buffer.from(PAYLOAD)).toString("latin1"));
    const refused = await nodeRequest(source.url, { headers: { ...headers, "webhook-id": "msg_2", "webhook-signature": wrong }, body: gzipSync(Buffer.from(PAYLOAD)) });
    expect(refused.status).to.equal(401);
  });
});
