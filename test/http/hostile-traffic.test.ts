import { connect, type Socket } from "node:net";
import { expect } from "chai";
import { BearerAuth } from "../../src/index";
import { Collector, sleep, startWebhook, useApps, webhook } from "../helpers/app";
import { httpRequest, RawClient, rawRequest } from "../helpers/raw-http";

/**
 * Sends the head of a request declaring a huge body, then streams zeros as fast as the
 * connection takes them until the server closes it or `forMs` passes. Returns the first
 * response, whether the connection was closed, and how many body bytes got onto the wire.
 */
async function uploadUntilClosed(port: number, head: Buffer, forMs: number): Promise<{ status: number; connection: string | undefined; closed: boolean; bodyBytes: number }> {
  const client = await RawClient.connect(port);
  await client.write(head);
  const zeros = Buffer.alloc(1 << 20);
  const socket = client.socket;
  const headBytes = socket.bytesWritten;
  const deadline = Date.now() + forMs;
  while (!client.closed && !socket.destroyed && Date.now() < deadline) {
    if (!socket.write(zeros)) {
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          socket.off("drain", done);
          socket.off("close", done);
          resolve();
        };
        const timer = setTimeout(done, 50);
        socket.once("drain", done);
        socket.once("close", done);
      });
    }
  }
  const bodyBytes = socket.bytesWritten - headBytes - socket.writableLength;
  const response = await client.readResponse(1_000);
  const closed = await client.waitClosed(1_000);
  client.destroy();
  return { status: response.status, connection: response.headers.connection, closed, bodyBytes };
}

const GIB = 1024 ** 3;
/** What the socket buffers of both ends hold at most, give or take: far below what a drain reads. */
const BUFFERED = 32 * 1024 * 1024;

describe("Hostile traffic", () => {
  const makeApp = useApps();

  describe("a body refused before it is read is not drained", () => {
    it("401 (missing bearer token) on a 1 GiB body: Connection: close, at most the socket buffers read", async () => {
      const { source, events } = await startWebhook(makeApp, { auth: new BearerAuth("t0ken") });
      const result = await uploadUntilClosed(source.port, httpRequest("POST", "/hook", { "Content-Length": GIB }), 3_000);
      expect(result.status).to.equal(401);
      expect(result.bodyBytes, `${result.bodyBytes} body bytes accepted`).to.be.below(BUFFERED);
      expect(result.connection).to.equal("close");
      expect(result.closed).to.equal(true);
      expect(events.count).to.equal(0);
    });

    it("the client still sending after the refusal gets no reset: the server ends its side and stops reading", async () => {
      const { source } = await startWebhook(makeApp, { auth: new BearerAuth("t0ken") });
      // Half-open allowed, as an uploading client (or nginx) is: the server's FIN does not end our side.
      const socket = connect({ port: source.port, host: "127.0.0.1", allowHalfOpen: true });
      await new Promise((resolve) => socket.once("connect", resolve));
      const errors: string[] = [];
      socket.on("error", (error: NodeJS.ErrnoException) => errors.push(error.code ?? error.message));
      let received = "";
      let ended = false;
      socket.on("data", (chunk: Buffer) => (received += chunk.toString("latin1")));
      socket.on("end", () => (ended = true));
      socket.write(httpRequest("POST", "/hook", { "Content-Length": GIB }));
      for (let waited = 0; !ended && waited < 1_000; waited += 10) await sleep(10);
      expect(received).to.match(/^HTTP\/1\.1 401 /);
      expect(ended, "server ended its side").to.equal(true);
      // A client that has not read the answer yet keeps uploading for a while: a reset now could
      // destroy the answer in its receive buffer (nginx: "broken pipe", then 502).
      const until = Date.now() + 300;
      while (Date.now() < until && errors.length === 0) {
        socket.write(Buffer.alloc(64 * 1024));
        await sleep(5);
      }
      socket.destroy();
      expect(errors).to.deep.equal([]);
    });

    it("404 (unknown path) and 405 (method not listed) on a chunked body: the connection is closed", async () => {
      const { source } = await startWebhook(makeApp);
      for (const [method, target, status] of [["POST", "/nowhere", 404], ["PUT", "/hook", 405]] as const) {
        const result = await uploadUntilClosed(source.port, httpRequest(method, target, { "Transfer-Encoding": "chunked" }), 3_000);
        expect(result.status, target).to.equal(status);
        expect(result.bodyBytes, `${target}: ${result.bodyBytes} body bytes accepted`).to.be.below(BUFFERED);
        expect(result.connection, target).to.equal("close");
        expect(result.closed, target).to.equal(true);
      }
    });

    it("keeps the connection when the refused body is small (read and discarded)", async () => {
      const { source } = await startWebhook(makeApp);
      const client = await RawClient.connect(source.port);
      await client.write(httpRequest("POST", "/nowhere", { "Content-Type": "application/json" }, '{"small":true}'));
      const refused = await client.readResponse();
      expect(refused.status).to.equal(404);
      expect(refused.headers.connection).to.equal("keep-alive");
      await client.write(httpRequest("POST", "/hook", { "Content-Type": "application/json" }, "{}"));
      expect((await client.readResponse()).status).to.equal(202);
      client.destroy();
    });

    it("Expect: 100-continue on an unknown path: 404 without 100 Continue, connection closed", async () => {
      const { source } = await startWebhook(makeApp);
      const client = await RawClient.connect(source.port);
      await client.write(httpRequest("POST", "/nowhere", { Expect: "100-continue", "Content-Length": 10_000 }));
      const first = await client.readResponse();
      expect(first.status).to.equal(404);
      expect(first.json().error).to.equal("not_found");
      expect(await client.waitClosed(1_000)).to.equal(true);
      client.destroy();
    });

    it("an Expect other than 100-continue: 417 in the JSON shape, no event, a chunked body not drained", async () => {
      const { source, events } = await startWebhook(makeApp);
      const result = await uploadUntilClosed(source.port, httpRequest("POST", "/hook", { Expect: "something-else", "Transfer-Encoding": "chunked" }), 3_000);
      expect(result.status).to.equal(417);
      expect(result.bodyBytes, `${result.bodyBytes} body bytes accepted`).to.be.below(BUFFERED);
      expect(result.connection).to.equal("close");
      expect(result.closed).to.equal(true);
      const small = await rawRequest(source.port, httpRequest("POST", "/hook", { Expect: "something-else" }, "{}"));
      expect(small.status).to.equal(417);
      expect(small.headers["content-type"]).to.equal("application/json");
      expect(small.json().error).to.equal("expectation_failed");
      await sleep(50);
      expect(events.count).to.equal(0);
    });

    it("Expect: 100-continue on a user's Express route that refuses without reading: no 100 Continue", async () => {
      const app = makeApp();
      const source = webhook();
      app.task({ source, name: "t" }, async () => undefined);
      const express = app.express("127.0.0.1", 0);
      express.post("/upload", (_req, res) => {
        res.status(403).json({ error: "forbidden", message: "no uploads" });
      });
      await app.start();
      const port = source.port;
      const client = await RawClient.connect(port);
      await client.write(httpRequest("POST", "/upload", { Expect: "100-continue", "Content-Length": 10_000 }));
      expect((await client.readResponse()).status).to.equal(403);
      client.destroy();
    });

    it("a user's Express route answering without reading a large body closes the connection", async () => {
      const app = makeApp();
      const source = webhook();
      app.task({ source, name: "t" }, async () => undefined);
      app.express("127.0.0.1", 0).post("/upload", (_req, res) => {
        res.status(403).json({ error: "forbidden" });
      });
      await app.start();
      const port = source.port;
      const result = await uploadUntilClosed(port, httpRequest("POST", "/upload", { "Content-Length": GIB }), 3_000);
      expect(result.status).to.equal(403);
      expect(result.bodyBytes, `${result.bodyBytes} body bytes accepted`).to.be.below(BUFFERED);
      expect(result.connection).to.equal("close");
    });
  });

  describe("connections that never send a byte", () => {
    function openIdle(port: number, count: number): Promise<Socket[]> {
      return Promise.all(
        Array.from(
          { length: count },
          () =>
            new Promise<Socket>((resolve, reject) => {
              const socket = connect({ port, host: "127.0.0.1" });
              socket.once("error", reject);
              socket.once("connect", () => {
                socket.off("error", reject);
                socket.on("error", () => undefined);
                resolve(socket);
              });
            }),
        ),
      );
    }
    const isOpen = (socket: Socket) => !socket.destroyed && !socket.readableEnded;

    it("are closed after firstByteTimeoutMs", async () => {
      const { source } = await startWebhook(makeApp, {}, { app: { http: { firstByteTimeoutMs: 300 } } });
      const sockets = await openIdle(source.port, 200);
      for (const socket of sockets) socket.on("end", () => socket.destroy());
      await sleep(1_500);
      const alive = sockets.filter(isOpen).length;
      for (const socket of sockets) socket.destroy();
      expect(alive, `${alive} of 200 idle sockets alive after 1.5 s`).to.equal(0);
      // A connection that does send its request is served as usual.
      expect((await rawRequest(source.port, httpRequest("POST", "/hook", { "Content-Type": "application/json" }, "{}"))).status).to.equal(202);
    });

    it("a connection that sent part of its headers is not cut by the first-byte timeout (headers timeout answers 408)", async () => {
      const { source } = await startWebhook(makeApp, {}, { app: { http: { firstByteTimeoutMs: 200, headersTimeoutMs: 800 } } });
      const client = await RawClient.connect(source.port);
      await client.write("POST /hook HTTP/1.1\r\n");
      await sleep(400);
      expect(client.closed).to.equal(false);
      const response = await client.readResponse(2_000);
      expect(response.status).to.equal(408);
      client.destroy();
    });

    it("refuses listener options that are not positive integers, naming them", () => {
      for (const http of [{ maxConnections: 0 }, { firstByteTimeoutMs: -1 }, { firstByteTimeoutMs: 1.5 }, { maxConnections: Number.NaN }]) {
        expect(() => makeApp(undefined, { http }), JSON.stringify(http)).to.throw(TypeError, /^http\.(maxConnections|firstByteTimeoutMs) must be a positive integer/);
      }
    });

    it("beyond maxConnections, new connections are closed at once; served again once others leave", async () => {
      const { source } = await startWebhook(makeApp, {}, { app: { http: { maxConnections: 10, firstByteTimeoutMs: 30_000 } } });
      const held = await openIdle(source.port, 10);
      await sleep(50);
      const extra = await RawClient.connect(source.port);
      expect(await extra.waitClosed(1_000), "connection over the limit closed").to.equal(true);
      extra.destroy();
      for (const socket of held) socket.destroy();
      // Served again once the server has seen them go (a dropped connection closes without an answer).
      let status = 0;
      for (let attempt = 0; attempt < 40 && status !== 202; attempt++) {
        await sleep(50);
        status = await rawRequest(source.port, httpRequest("POST", "/hook", { "Content-Type": "application/json" }, "{}")).then((r) => r.status, () => 0);
      }
      expect(status).to.equal(202);
    });
  });

  describe("a malformed request pipelined behind a good one", () => {
    it("the good request gets its 202 first, then the 400, then the close", async () => {
      const { source, events } = await startWebhook(makeApp);
      const client = await RawClient.connect(source.port);
      await client.write(Buffer.concat([httpRequest("POST", "/hook", { "Content-Type": "application/json" }, '{"good":1}'), Buffer.from("GARBAGE\r\n\r\n")]));
      const first = await client.readResponse();
      const second = await client.readResponse();
      expect(await client.waitClosed(1_000)).to.equal(true);
      client.destroy();
      expect([first.status, second.status]).to.deep.equal([202, 400]);
      const [{ ctx, event }] = await events.waitFor(1);
      expect(first.json().id).to.equal(ctx.eventId);
      expect(event.body).to.deep.equal({ good: 1 });
      expect(second.json().error).to.equal("bad_request");
    });

    it("the same when the task answers late (ack: processed) and two good requests precede", async () => {
      const { source, events } = await startWebhook(makeApp, { ack: "processed" }, { reply: () => sleep(150) });
      const client = await RawClient.connect(source.port);
      const good = (n: number) => httpRequest("POST", "/hook", { "Content-Type": "application/json" }, `{"n":${n}}`);
      await client.write(Buffer.concat([good(1), good(2), Buffer.from("\u0001 nonsense\r\n\r\n")]));
      const statuses = [(await client.readResponse()).status, (await client.readResponse()).status, (await client.readResponse()).status];
      expect(statuses).to.deep.equal([202, 202, 400]);
      expect(await client.waitClosed(1_000)).to.equal(true);
      client.destroy();
      expect((await events.waitFor(2)).map((r) => r.event.body)).to.deep.equal([{ n: 1 }, { n: 2 }]);
    });

    it("a pipelined request that times out behind a slow answer: the earlier request's 202 first, then 408", async () => {
      const http = { headersTimeoutMs: 200, requestTimeoutMs: 300 };
      const { source, events } = await startWebhook(makeApp, { ack: "processed" }, { app: { http }, reply: () => sleep(500) });
      const client = await RawClient.connect(source.port);
      await client.write(Buffer.concat([httpRequest("POST", "/hook", { "Content-Type": "application/json" }, '{"slow":1}'), Buffer.from("POST /hook HTTP/1.1\r\nHost: x\r\n")]));
      const statuses = [(await client.readResponse(3_000)).status, (await client.readResponse(3_000)).status];
      expect(statuses).to.deep.equal([202, 408]);
      expect(await client.waitClosed(1_000)).to.equal(true);
      client.destroy();
      expect((await events.waitFor(1))[0].event.body).to.deep.equal({ slow: 1 });
    });

    it("a body longer than its Content-Length: the request gets its 202, the excess a 400", async () => {
      const { source, events } = await startWebhook(makeApp, { parser: "text" });
      const client = await RawClient.connect(source.port);
      const head = httpRequest("POST", "/hook", { "Content-Type": "text/plain", "Content-Length": 5 });
      await client.write(Buffer.concat([head, Buffer.from("hello world and more\r\n\r\n")]));
      const statuses = [(await client.readResponse()).status, (await client.readResponse()).status];
      expect(statuses).to.deep.equal([202, 400]);
      expect(await client.waitClosed(1_000)).to.equal(true);
      client.destroy();
      expect((await events.waitFor(1))[0].event.body).to.equal("hello");
    });
  });

  describe("methods", () => {
    it("answers CONNECT with 405 in the JSON error shape and closes", async () => {
      const { source } = await startWebhook(makeApp);
      const client = await RawClient.connect(source.port);
      await client.write("CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n");
      const response = await client.readResponse();
      expect(response.status).to.equal(405);
      expect(response.headers["content-type"]).to.equal("application/json");
      expect(response.json()).to.have.keys(["error", "message"]);
      expect(response.json().error).to.equal("method_not_allowed");
      expect(await client.waitClosed(1_000)).to.equal(true);
      client.destroy();
    });

    it("HEAD on a GET route answers as GET does, without a body; Allow lists HEAD", async () => {
      const app = makeApp();
      const source = webhook({ methods: ["GET"] });
      const events = new Collector();
      app.task({ source, name: "t" }, events.handler);
      await app.start();
      const client = await RawClient.connect(source.port);
      await client.write(httpRequest("GET", "/hook?x=1"));
      const get = await client.readResponse();
      await client.write(httpRequest("HEAD", "/hook?x=1"));
      const head = await client.readResponse(3_000, { head: true });
      await client.write(httpRequest("GET", "/hook"));
      const after = await client.readResponse();
      expect(client.pending.length, "no body after the HEAD answer").to.equal(0);
      client.destroy();
      expect([get.status, head.status, after.status]).to.deep.equal([202, 202, 202]);
      expect(head.headers["content-type"]).to.equal(get.headers["content-type"]);
      expect(head.headers["content-length"]).to.equal(get.headers["content-length"]);
      const refused = await rawRequest(source.port, httpRequest("DELETE", "/hook"));
      expect(refused.status).to.equal(405);
      expect(refused.headers.allow).to.equal("GET, HEAD");
    });
  });
});
