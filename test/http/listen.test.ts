import { Agent } from "node:http";
import { expect } from "chai";
import { ListenError, MemoryStore } from "../../src/index";
import { Collector, gate, sleep, startWebhook, useApps, webhook } from "../helpers/app";
import { closeServer, freePort, holdPort, nodeRequest, postJson, tryConnect } from "../helpers/http-client";

async function tryListen(host: string): Promise<string> {
  try {
    await closeServer(await holdPort(0, host));
    return "ok";
  } catch (error) {
    return (error as NodeJS.ErrnoException).code ?? "error";
  }
}
import { httpRequest, RawClient } from "../helpers/raw-http";

describe("HTTP: listening and stopping", () => {
  const makeApp = useApps();

  it("reports a port held by another server as a ListenError naming host and port", async () => {
    const port = await freePort();
    const other = await holdPort(port);
    try {
      const app = makeApp();
      app.task({ source: webhook({ port }), name: "t" }, async () => undefined);
      let error: unknown;
      await app.start().catch((e: unknown) => (error = e));
      expect(error).to.be.instanceOf(ListenError);
      const listenError = error as ListenError;
      expect(listenError.name).to.equal("ListenError");
      expect(listenError.code).to.equal("EADDRINUSE");
      expect(listenError.message).to.equal(`cannot listen on 127.0.0.1:${port}: the address is already in use`);
      expect(app.running).to.equal(false);
    } finally {
      await closeServer(other);
    }
  });

  for (const hosts of [["0.0.0.0", "127.0.0.1"], ["127.0.0.1", "0.0.0.0"]]) {
    it(`refuses two sources on one port with hosts ${hosts.join(" and ")}, naming host and port, and frees the port`, async () => {
      const port = await freePort();
      const app = makeApp();
      app.task({ source: webhook({ host: hosts[0], port, path: "/a" }), name: "a" }, async () => undefined);
      app.task({ source: webhook({ host: hosts[1], port, path: "/b" }), name: "b" }, async () => undefined);
      let error: unknown;
      await app.start().catch((e: unknown) => (error = e));
      expect(error).to.be.instanceOf(ListenError);
      const message = (error as Error).message;
      expect(message).to.include(`${hosts[1]}:${port}`);
      expect(message).to.include(`${hosts[0]}:${port}`);
      expect(message).to.match(/cannot both bind/);
      expect(message).to.not.match(/\n\s+at /);
      // The listener that did bind was closed again.
      expect(await tryConnect(port)).to.equal("ECONNREFUSED");
      await closeServer(await holdPort(port, "0.0.0.0"));
    });
  }

  it("answers a request in flight during stop(), then refuses connections", async () => {
    const store = new MemoryStore();
    const { app, source, events } = await startWebhook(makeApp, {}, { app: { store } });
    const client = await RawClient.connect(source.port);
    await client.write(httpRequest("POST", "/hook", { "Content-Type": "application/json", "Content-Length": 12 }));
    await client.write('{"a":');
    await sleep(20);
    const stopped = app.stop();
    await sleep(50);
    await client.write('"late"}');
    const response = await client.readResponse();
    expect(response.status).to.equal(202);
    await stopped;
    expect(client.closed || (await client.waitClosed(500))).to.equal(true);
    client.destroy();
    // Accepted as the runners stop: run, or kept for the next start.
    const kept = (await store.claim("webhook:receive", 10)).map((m) => (m.payload as { body: unknown }).body);
    expect([...events.events.map((e) => e.body), ...kept]).to.deep.equal([{ a: "late" }]);
    expect(await tryConnect(source.port)).to.equal("ECONNREFUSED");
  });

  it("lets a task waited on by ack: processed finish during stop(), and the caller gets its answer", async () => {
    const hold = gate();
    let finished = false;
    const { app, source } = await startWebhook(makeApp, { ack: "processed", reply: "result" }, {
      reply: async () => {
        await hold.promise;
        finished = true;
        return { done: true };
      },
    });
    const pending = postJson(source.url, {});
    await sleep(50);
    const stopped = app.stop();
    await sleep(50);
    hold.open();
    const reply = await pending;
    await stopped;
    expect(finished).to.equal(true);
    expect(reply.status).to.equal(200);
    expect(reply.json()).to.deep.equal({ done: true });
    expect(await tryConnect(source.port)).to.equal("ECONNREFUSED");
  });

  it("answers a request in flight during stop() with Connection: close, so that a keep-alive client sends no other on it", async () => {
    const hold = gate();
    const { app, source } = await startWebhook(makeApp, { ack: "processed" }, { reply: () => hold.promise });
    const client = await RawClient.connect(source.port);
    try {
      await client.write(httpRequest("POST", "/hook", { "Content-Type": "application/json", "Content-Length": 2 }, "{}"));
      await sleep(50);
      const stopped = app.stop();
      await sleep(20);
      hold.open();
      const response = await client.readResponse();
      expect(response.status).to.equal(202);
      expect(response.headers.connection).to.equal("close");
      expect(client.closed || (await client.waitClosed(500))).to.equal(true);
      await stopped;
    } finally {
      client.destroy();
    }
  });

  it("answers a request sent on an idle keep-alive connection just as stop() begins, instead of resetting it", async () => {
    const store = new MemoryStore();
    const { app, source, events } = await startWebhook(makeApp, {}, { app: { store } });
    const client = await RawClient.connect(source.port);
    try {
      const request = httpRequest("POST", "/hook", { "Content-Type": "application/json", "Content-Length": 2 }, "{}");
      await client.write(request);
      expect((await client.readResponse()).headers.connection).to.equal("keep-alive");
      // Sent, but not yet read by the server when the stop begins (the same turn of the loop).
      client.socket.write(request);
      const stopped = app.stop();
      const response = await client.readResponse();
      expect(response.status).to.equal(202);
      expect(response.headers.connection).to.equal("close");
      await stopped;
      // The second, accepted as the runners stop: run, or kept for the next start.
      expect(events.count + (await store.depth("webhook:receive"))).to.equal(2);
    } finally {
      client.destroy();
    }
  });

  it("stops promptly with an idle keep-alive connection open", async () => {
    const { app, source } = await startWebhook(makeApp);
    const agent = new Agent({ keepAlive: true });
    try {
      expect((await nodeRequest(source.url, { agent, body: "{}" })).status).to.equal(202);
      const started = Date.now();
      await app.stop();
      expect(Date.now() - started).to.be.below(1_000);
      expect(await tryConnect(source.port)).to.equal("ECONNREFUSED");
    } finally {
      agent.destroy();
    }
  });

  it("listens on an IPv6 address, with a bracketed URL and the IPv6 client in the event", async function () {
    if ((await tryListen("::1")) !== "ok") this.skip();
    const { source, events } = await startWebhook(makeApp, { host: "::1" });
    expect(source.url).to.equal(`http://[::1]:${source.port}/hook`);
    expect((await postJson(source.url, { v6: true })).status).to.equal(202);
    const [{ event }] = await events.waitFor(1);
    expect(event.client[0]).to.equal("::1");
    expect(event.client[1]).to.be.above(0);
    expect(event.body).to.deep.equal({ v6: true });
  });

  it("tells the bound port and URL after start, on the requested host", async () => {
    const port = await freePort();
    const app = makeApp();
    const fixed = webhook({ port, path: "/fixed" });
    const any = webhook({ host: "127.0.0.1", port: 0, path: "/any" });
    const a = new Collector();
    app.task({ source: fixed, name: "fixed" }, a.handler);
    app.task({ source: any, name: "any" }, async () => undefined);
    expect(any.port).to.equal(0);
    await app.start();
    expect(fixed.port).to.equal(port);
    expect(fixed.url).to.equal(`http://127.0.0.1:${port}/fixed`);
    expect(any.port).to.be.above(0).and.not.equal(port);
    expect((await postJson(fixed.url, {})).status).to.equal(202);
    await a.waitFor(1);
  });
});
