import { Agent } from "node:http";
import { expect } from "chai";
import { BearerAuth } from "../../src/index";
import { gate, sleep, startWebhook, useApps, webhook } from "../helpers/app";
import { nodeRequest } from "../helpers/http-client";
import { chunked, httpRequest, RawClient, rawRequest } from "../helpers/raw-http";

describe("HTTP transport: keep-alive, chunked, malformed and slow requests", () => {
  const makeApp = useApps();

  it("serves several requests on one keep-alive connection (node:http Agent)", async () => {
    const { source, events } = await startWebhook(makeApp);
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const replies = [];
      for (let n = 0; n < 5; n++) {
        replies.push(await nodeRequest(source.url, { agent, headers: { "content-type": "application/json" }, body: JSON.stringify({ n }) }));
      }
      expect(replies.map((r) => r.status)).to.deep.equal([202, 202, 202, 202, 202]);
      expect(replies.map((r) => r.reusedSocket)).to.deep.equal([false, true, true, true, true]);
      expect(new Set(replies.map((r) => r.localPort)).size).to.equal(1);
      expect(replies[0].headers.connection).to.equal("keep-alive");
      await events.waitFor(5);
      expect(events.events.map((e) => (e.body as { n: number }).n)).to.deep.equal([0, 1, 2, 3, 4]);
      expect(new Set(events.events.map((e) => e.client[1]))).to.deep.equal(new Set([replies[0].localPort]));
    } finally {
      agent.destroy();
    }
  });

  it("answers pipelined requests in order on one connection", async () => {
    const { source, events } = await startWebhook(makeApp, { parser: "text" });
    const client = await RawClient.connect(source.port);
    await client.write(Buffer.concat([0, 1, 2].map((n) => httpRequest("POST", `/hook?n=${n}`, { "Content-Type": "text/plain" }, `body ${n}`))));
    const responses = [await client.readResponse(), await client.readResponse(), await client.readResponse()];
    client.destroy();
    expect(responses.map((r) => r.status)).to.deep.equal([202, 202, 202]);
    const received = await events.waitFor(3);
    expect(received.map((r) => r.event.body)).to.deep.equal(["body 0", "body 1", "body 2"]);
    expect(responses.map((r) => r.json().id)).to.deep.equal(received.map((r) => r.ctx.eventId));
  });

  it("reads a chunked request body sent in pieces over time", async () => {
    const { source, events } = await startWebhook(makeApp);
    const pieces = ['{"items":[', '"\u00e9\u2713",', "1,2,3", "]}"];
    const encoded = chunked(...pieces);
    const head = httpRequest("POST", "/hook", { "Content-Type": "application/json", "Transfer-Encoding": "chunked" });
    // Split the encoded body at awkward places, with pauses between writes.
    const response = await rawRequest(source.port, [head, encoded.subarray(0, 7), 30, encoded.subarray(7, 20), 30, encoded.subarray(20)]);
    expect(response.status).to.equal(202);
    const [{ event, ctx }] = await events.waitFor(1);
    expect(event.body).to.deep.equal({ items: ["\u00e9\u2713", 1, 2, 3] });
    expect(event.headers["transfer-encoding"]).to.equal("chunked");
    expect(event.headers["content-length"]).to.equal(undefined);
    expect(ctx.rawBody.toString("utf8")).to.equal(pieces.join(""));
  });

  it("reads a chunked body on a keep-alive connection, then the next request", async () => {
    const { source, events } = await startWebhook(makeApp, { parser: "raw" });
    const client = await RawClient.connect(source.port);
    const bytes = Buffer.from(Array.from({ length: 3000 }, (_, i) => i % 256));
    await client.write(httpRequest("POST", "/hook", { "Transfer-Encoding": "chunked" }));
    await client.write(chunked(bytes.subarray(0, 1000), bytes.subarray(1000, 2999), bytes.subarray(2999)));
    expect((await client.readResponse()).status).to.equal(202);
    await client.write(httpRequest("POST", "/hook", {}, "second"));
    expect((await client.readResponse()).status).to.equal(202);
    client.destroy();
    const received = await events.waitFor(2);
    expect((received[0].event.body as Buffer).equals(bytes)).to.equal(true);
    expect((received[1].event.body as Buffer).toString()).to.equal("second");
  });

  it("answers Expect: 100-continue (as curl sends for larger bodies)", async () => {
    const { source, events } = await startWebhook(makeApp);
    const client = await RawClient.connect(source.port);
    await client.write(httpRequest("POST", "/hook", { "Content-Type": "application/json", "Content-Length": 8, Expect: "100-continue" }));
    const interim = await client.readResponse();
    expect(interim.status).to.equal(100);
    await client.write('{"a":42}');
    const final = await client.readResponse();
    client.destroy();
    expect(final.status).to.equal(202);
    expect((await events.waitFor(1))[0].event.body).to.deep.equal({ a: 42 });
  });

  it("accepts the absolute form of the request target (RFC 9112 §3.2.2)", async () => {
    const { source, events } = await startWebhook(makeApp);
    const client = await RawClient.connect(source.port);
    await client.write(httpRequest("POST", `http://127.0.0.1:${source.port}/hook?x=1&x=2`, { "Content-Type": "application/json" }, '{"abs":1}'));
    expect((await client.readResponse()).status).to.equal(202);
    await client.write(httpRequest("POST", `HTTP://example.com?y=1`, { "Content-Type": "application/json" }, "{}"));
    expect((await client.readResponse()).status).to.equal(404);
    client.destroy();
    const [{ event }] = await events.waitFor(1);
    expect(event.path).to.equal("/hook");
    expect(event.query).to.deep.equal({ x: ["1", "2"] });
    expect(event.body).to.deep.equal({ abs: 1 });
  });

  it("makes no event when the client goes away in the middle of the body, and keeps serving", async () => {
    const { source, events } = await startWebhook(makeApp);
    const client = await RawClient.connect(source.port);
    await client.write(httpRequest("POST", "/hook", { "Content-Type": "application/json", "Content-Length": 100 }));
    await client.write('{"half":');
    await sleep(30);
    client.destroy();
    await sleep(50);
    expect(events.count).to.equal(0);
    const response = await rawRequest(source.port, httpRequest("POST", "/hook", { "Content-Type": "application/json" }, '{"whole":1}'));
    expect(response.status).to.equal(202);
    const [{ event }] = await events.waitFor(1);
    expect(event.body).to.deep.equal({ whole: 1 });
  });

  describe("Expect: 100-continue refusals come before the upload", () => {
    async function firstAnswer(port: number, headers: Record<string, string | number>, method = "POST", target = "/hook"): Promise<{ status: number; closed: boolean }> {
      const client = await RawClient.connect(port);
      await client.write(httpRequest(method, target, { Expect: "100-continue", ...headers }));
      const response = await client.readResponse();
      const closed = await client.waitClosed(500);
      client.destroy();
      return { status: response.status, closed };
    }

    it("413 for a declared Content-Length over the limit, without 100 Continue", async () => {
      const { source, events } = await startWebhook(makeApp, { maxBodyBytes: 100 });
      expect(await firstAnswer(source.port, { "Content-Length": 5_000_000 })).to.deep.equal({ status: 413, closed: true });
      expect(events.count).to.equal(0);
    });

    it("401 for a missing bearer token, without 100 Continue", async () => {
      const { source } = await startWebhook(makeApp, { auth: new BearerAuth("t0ken") });
      expect(await firstAnswer(source.port, { "Content-Length": 10_000 })).to.deep.equal({ status: 401, closed: true });
    });

    it("405 for a method not listed, without 100 Continue", async () => {
      const { source } = await startWebhook(makeApp);
      expect((await firstAnswer(source.port, { "Content-Length": 10 }, "PUT")).status).to.equal(405);
    });

    it("503 when the store is full, without 100 Continue", async () => {
      const hold = gate();
      const { source, events } = await startWebhook(makeApp, {}, { app: { maxQueued: 1 }, reply: () => hold.promise });
      expect((await nodeRequest(source.url, { body: "{}" })).status).to.equal(202);
      await events.waitFor(1);
      expect((await firstAnswer(source.port, { "Content-Length": 10 })).status).to.equal(503);
      hold.open();
    });

    it("100 Continue for the user's Express routes, which read the body themselves", async () => {
      const app = makeApp();
      const source = webhook();
      app.task({ source, name: "t" }, async () => undefined);
      app.express("127.0.0.1", 0).post("/echo", (req, res) => {
        const chunks: Buffer[] = [];
        req.on("data", (c: Buffer) => chunks.push(c));
        req.on("end", () => res.type("text/plain").send(Buffer.concat(chunks).toString()));
      });
      await app.start();
      const client = await RawClient.connect(source.port);
      await client.write(httpRequest("POST", "/echo", { Expect: "100-continue", "Content-Length": 5 }));
      expect((await client.readResponse()).status).to.equal(100);
      await client.write("hello");
      const response = await client.readResponse();
      client.destroy();
      expect(response.status).to.equal(200);
      expect(response.text).to.equal("hello");
    });
  });

  it("answers a malformed request line with 400 JSON and closes the connection", async () => {
    const { source, events } = await startWebhook(makeApp);
    for (const garbage of ["GARBAGE\r\n\r\n", "POST /hook HTTP/9.9\r\nHost: x\r\n\r\n", "POST /hook\r\n\r\n", "\u0001\u0002\u0003 nonsense\r\n\r\n"]) {
      const client = await RawClient.connect(source.port);
      await client.write(garbage);
      const response = await client.readResponse();
      expect(response.status, JSON.stringify(garbage)).to.equal(400);
      expect(response.headers["content-type"]).to.equal("application/json");
      expect(response.json().error).to.equal("bad_request");
      expect(response.headers.connection).to.equal("close");
      expect(await client.waitClosed(1_000), "connection closed").to.equal(true);
      client.destroy();
    }
    await sleep(30);
    expect(events.count).to.equal(0);
  });

  it("answers a request with both Content-Length and chunked encoding (smuggling) with 400", async () => {
    const { source, events } = await startWebhook(makeApp);
    const response = await rawRequest(
      source.port,
      "POST /hook HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\n\r\n",
    );
    expect(response.status).to.equal(400);
    await sleep(30);
    expect(events.count).to.equal(0);
  });

  it("answers a transfer coding other than chunked with 501 and makes no event: the body would be stored still coded", async () => {
    const { source, events } = await startWebhook(makeApp, { parser: "raw" });
    for (const coding of ["gzip, chunked", "deflate,chunked"]) {
      const response = await rawRequest(source.port, Buffer.concat([httpRequest("POST", "/hook", { "Transfer-Encoding": coding }), chunked("\x1f\x8b coded")]));
      expect(response.status, coding).to.equal(501);
      expect(response.json().error, coding).to.equal("unsupported_transfer_encoding");
      expect(response.headers.connection, coding).to.equal("close");
    }
    // The same coding list in two headers.
    const split = await rawRequest(source.port, Buffer.concat([Buffer.from("POST /hook HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n"), chunked("coded")]));
    expect(split.status).to.equal(501);
    expect((await rawRequest(source.port, Buffer.concat([httpRequest("POST", "/hook", { "Transfer-Encoding": "Chunked" }), chunked("plain")]))).status).to.equal(202);
    await events.waitFor(1);
    await sleep(30);
    expect(events.events.map((e) => (e.body as Buffer).toString())).to.deep.equal(["plain"]);
  });

  it("answers oversized headers with 431 JSON", async () => {
    const { source, events } = await startWebhook(makeApp);
    const client = await RawClient.connect(source.port);
    await client.write(`POST /hook HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(20_000)}\r\nContent-Length: 0\r\n\r\n`);
    const response = await client.readResponse();
    expect(response.status).to.equal(431);
    expect(response.json().error).to.equal("headers_too_large");
    expect(await client.waitClosed(1_000)).to.equal(true);
    client.destroy();
    expect(events.count).to.equal(0);
  });

  describe("slow clients (headersTimeoutMs 300, requestTimeoutMs 600)", () => {
    const http = { headersTimeoutMs: 300, requestTimeoutMs: 600 };

    it("answers 408 and closes the connection when the headers come too slowly", async () => {
      const { source, events } = await startWebhook(makeApp, {}, { app: { http } });
      const client = await RawClient.connect(source.port);
      const started = Date.now();
      await client.write("POST /hook HTTP/1.1\r\nHost: x\r\n");
      await sleep(100);
      await client.write("X-Slow: 1\r\n");
      const response = await client.readResponse(2_000);
      const elapsed = Date.now() - started;
      expect(response.status).to.equal(408);
      expect(response.json().error).to.equal("request_timeout");
      expect(elapsed).to.be.within(250, 1_500);
      expect(await client.waitClosed(1_000), "connection closed").to.equal(true);
      client.destroy();
      expect(events.count).to.equal(0);
    });

    it("answers 408 and closes the connection when the body comes too slowly, and makes no event", async () => {
      const { source, events } = await startWebhook(makeApp, {}, { app: { http } });
      const client = await RawClient.connect(source.port);
      const started = Date.now();
      await client.write(httpRequest("POST", "/hook", { "Content-Type": "application/json", "Content-Length": 20 }));
      await client.write('{"partial":');
      const response = await client.readResponse(2_000);
      const elapsed = Date.now() - started;
      expect(response.status).to.equal(408);
      expect(response.json().error).to.equal("request_timeout");
      expect(elapsed).to.be.within(550, 1_800);
      expect(await client.waitClosed(1_000), "connection closed").to.equal(true);
      client.destroy();
      await sleep(50);
      expect(events.count).to.equal(0);
    });

    it("answers 408 for a chunked body that never ends", async () => {
      const { source, events } = await startWebhook(makeApp, {}, { app: { http } });
      const client = await RawClient.connect(source.port);
      await client.write(httpRequest("POST", "/hook", { "Transfer-Encoding": "chunked" }));
      await client.write("5\r\nhello\r\n");
      await sleep(200);
      await client.write("5\r\nworld\r\n");
      const response = await client.readResponse(2_000);
      expect(response.status).to.equal(408);
      expect(await client.waitClosed(1_000)).to.equal(true);
      client.destroy();
      await sleep(50);
      expect(events.count).to.equal(0);
    });

    it("does not time out a request whose task takes longer than the request timeout", async () => {
      const { source } = await startWebhook(makeApp, { ack: "processed" }, { app: { http }, reply: () => sleep(900) });
      const response = await rawRequest(source.port, httpRequest("POST", "/hook", { "Content-Type": "application/json" }, "{}"), 3_000);
      expect(response.status).to.equal(202);
    });

    it("does not count keep-alive idle time against the next request's timeouts", async () => {
      const { source, events } = await startWebhook(makeApp, {}, { app: { http } });
      const client = await RawClient.connect(source.port);
      for (let n = 0; n < 2; n++) {
        await client.write(httpRequest("POST", "/hook", { "Content-Type": "application/json" }, `{"n":${n}}`));
        expect((await client.readResponse()).status).to.equal(202);
        // Idle longer than both the headers and the request timeout (keep-alive allows 5 s).
        await sleep(750);
      }
      expect(client.closed).to.equal(false);
      client.destroy();
      await events.waitFor(2);
    });

    it("cuts a slow client at stop()'s deadline instead of waiting for it", async () => {
      const { app, source } = await startWebhook(makeApp, {}, { app: { http: { headersTimeoutMs: 30_000, requestTimeoutMs: 60_000 } } });
      const client = await RawClient.connect(source.port);
      await client.write("POST /hook HTTP/1.1\r\nHost: x\r\n");
      const started = Date.now();
      await app.stop({ timeoutMs: 300 });
      expect(Date.now() - started).to.be.below(1_500);
      expect(await client.waitClosed(500)).to.equal(true);
      client.destroy();
    });
  });
});
