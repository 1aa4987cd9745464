import { expect } from "chai";
import { WebhookError, WebhookResponse } from "../../../src/index";
import { gate, sleep, startWebhook, useApps } from "../../helpers/app";
import { postJson, send } from "../../helpers/http-client";
import { httpRequest, RawClient } from "../../helpers/raw-http";
import { recordingLogger, type LogLine } from "../../helpers/wait";

describe("WebhookSource: answers", () => {
  const makeApp = useApps();

  it("answers 202 {accepted: true, id} by default, the id being the task's ctx.eventId", async () => {
    const { source, events } = await startWebhook(makeApp);
    const replies = [await postJson(source.url, { n: 1 }), await postJson(source.url, { n: 2 })];
    for (const reply of replies) {
      expect(reply.status).to.equal(202);
      expect(reply.headers.get("content-type")).to.match(/^application\/json/);
      expect(Object.keys(reply.json()).sort()).to.deep.equal(["accepted", "id"]);
      expect(reply.json().accepted).to.equal(true);
    }
    const received = await events.waitFor(2);
    expect(replies.map((r) => r.json().id)).to.deep.equal(received.map((r) => r.ctx.eventId));
    expect(replies[0].json().id).to.not.equal(replies[1].json().id);
  });

  it("sends a custom WebhookResponse: status, headers and JSON body", async () => {
    const response = new WebhookResponse({ status_code: 200, body: { ok: true, nested: { list: [1, "two"] } }, headers: { "X-Custom": "yes", "Cache-Control": "no-store" } });
    const { source, events } = await startWebhook(makeApp, { response });
    const reply = await postJson(source.url, { n: 1 });
    expect(reply.status).to.equal(200);
    expect(reply.headers.get("x-custom")).to.equal("yes");
    expect(reply.headers.get("cache-control")).to.equal("no-store");
    expect(reply.headers.get("content-type")).to.match(/^application\/json/);
    expect(reply.json()).to.deep.equal({ ok: true, nested: { list: [1, "two"] } });
    expect((await events.waitFor(1))[0].event.body).to.deep.equal({ n: 1 });
  });

  it("sends a custom response with a text body, an explicit content type, or no body", async () => {
    const text = await startWebhook(makeApp, { response: new WebhookResponse({ status_code: 201, body: "thanks" }) });
    const a = await postJson(text.source.url, {});
    expect(a.status).to.equal(201);
    expect(a.text).to.equal("thanks");
    expect(a.headers.get("content-type")).to.match(/^text\/plain/);

    const typed = await startWebhook(makeApp, { response: new WebhookResponse({ status_code: 200, body: "<ok/>", headers: { "content-type": "application/xml" } }) });
    const b = await postJson(typed.source.url, {});
    expect(b.headers.get("content-type")).to.equal("application/xml");
    expect(b.text).to.equal("<ok/>");

    const empty = await startWebhook(makeApp, { response: new WebhookResponse({ status_code: 204 }) });
    const c = await postJson(empty.source.url, {});
    expect(c.status).to.equal(204);
    expect(c.text).to.equal("");
  });

  it("sends a 204 without Content-Length or body, even when the response has a body (RFC 9110 §8.6)", async () => {
    const { source, events } = await startWebhook(makeApp, { response: new WebhookResponse({ status_code: 204, body: { ignored: true } }) });
    const client = await RawClient.connect(source.port);
    await client.write(httpRequest("POST", "/hook", { "content-type": "application/json" }, "{}"));
    const first = await client.readResponse();
    expect(first.status).to.equal(204);
    expect(first.headers).to.not.have.property("content-length");
    await client.write(httpRequest("POST", "/hook", { "content-type": "application/json" }, "{}"));
    const second = await client.readResponse();
    client.destroy();
    expect(second.status).to.equal(204);
    await events.waitFor(2);
  });

  it("refuses a WebhookResponse with a header that would corrupt the answer", () => {
    expect(() => new WebhookResponse({ headers: { "x-a": "one\r\nSet-Cookie: evil=1" } })).to.throw(TypeError, /x-a/);
    expect(() => new WebhookResponse({ headers: { "bad name": "x" } })).to.throw(TypeError);
    expect(() => new WebhookResponse({ status_code: 99 })).to.throw(TypeError);
    expect(new WebhookResponse({ headers: { "X-Ok": "fine" } }).headers).to.deep.equal({ "x-ok": "fine" });
  });

  describe('ack: "processed"', () => {
    it("answers only after the task has finished", async () => {
      let finished = false;
      const { source } = await startWebhook(makeApp, { ack: "processed" }, {
        reply: async () => {
          await sleep(200);
          finished = true;
        },
      });
      const started = Date.now();
      const reply = await postJson(source.url, { n: 1 });
      expect(reply.status).to.equal(202);
      expect(finished).to.equal(true);
      expect(Date.now() - started).to.be.at.least(190);
      expect(reply.json().accepted).to.equal(true);
    });

    it("answers 500 task_failed when the task throws, without retrying or dead-lettering", async () => {
      const { app, source, events } = await startWebhook(makeApp, { ack: "processed" }, {
        retry: { attempts: 3, initialDelayMs: 10 },
        reply: () => {
          throw new Error("database password is hunter2");
        },
      });
      const reply = await postJson(source.url, { n: 1 });
      expect(reply.status).to.equal(500);
      expect(reply.json().error).to.equal("task_failed");
      expect(reply.text).to.not.include("hunter2");
      await sleep(100);
      expect(events.count).to.equal(1);
      expect(await app.deadLetters.list()).to.have.length(0);
    });

    it("answers 202 when the task outlasts ackTimeoutMs, and the task still completes", async () => {
      const hold = gate();
      let finished = false;
      const { source, events } = await startWebhook(makeApp, { ack: "processed", ackTimeoutMs: 100 }, {
        reply: async () => {
          await hold.promise;
          finished = true;
        },
      });
      const started = Date.now();
      const reply = await postJson(source.url, { n: 1 });
      expect(reply.status).to.equal(202);
      expect(Date.now() - started).to.be.within(90, 1_000);
      expect(finished).to.equal(false);
      const [{ ctx }] = await events.waitFor(1);
      expect(reply.json().id).to.equal(ctx.eventId);
      hold.open();
      await sleep(20);
      expect(finished).to.equal(true);
    });
  });

  describe('reply: "result"', () => {
    it("sends an object the task returns as JSON 200", async () => {
      const { source } = await startWebhook(makeApp, { reply: "result" }, { reply: (_ctx, event) => ({ echo: event.body, n: 7 }) });
      const reply = await postJson(source.url, { hello: "world" });
      expect(reply.status).to.equal(200);
      expect(reply.headers.get("content-type")).to.match(/^application\/json/);
      expect(reply.json()).to.deep.equal({ echo: { hello: "world" }, n: 7 });
    });

    it("sends a string the task returns as text", async () => {
      const { source } = await startWebhook(makeApp, { reply: "result" }, { reply: async () => "pong \u2713" });
      const reply = await postJson(source.url, {});
      expect(reply.status).to.equal(200);
      expect(reply.headers.get("content-type")).to.match(/^text\/plain/);
      expect(reply.text).to.equal("pong \u2713");
    });

    it("sends a WebhookResponse the task returns as it is", async () => {
      const { source } = await startWebhook(makeApp, { reply: "result" }, {
        reply: () => new WebhookResponse({ status_code: 201, body: { created: 1 }, headers: { location: "/things/1" } }),
      });
      const reply = await postJson(source.url, {});
      expect(reply.status).to.equal(201);
      expect(reply.headers.get("location")).to.equal("/things/1");
      expect(reply.json()).to.deep.equal({ created: 1 });
    });

    it("sends the source's fixed answer when the task returns undefined", async () => {
      const { source, events } = await startWebhook(makeApp, { reply: "result" }, { reply: () => undefined });
      const reply = await postJson(source.url, {});
      expect(reply.status).to.equal(202);
      const [{ ctx }] = await events.waitFor(1);
      expect(reply.json()).to.deep.equal({ accepted: true, id: ctx.eventId });
    });

    it("answers a WebhookError with its status and body", async () => {
      const { source } = await startWebhook(makeApp, { reply: "result" }, {
        reply: () => {
          throw new WebhookError(422, "invalid_payload", "missing field: id");
        },
      });
      const reply = await postJson(source.url, {});
      expect(reply.status).to.equal(422);
      expect(reply.json()).to.deep.equal({ error: "invalid_payload", message: "missing field: id" });
    });

    it("answers any other error with 500 and a generic body that does not carry the error's text", async () => {
      const { app, source } = await startWebhook(makeApp, { reply: "result" }, {
        reply: () => {
          throw new Error("secret internal detail 12345");
        },
      });
      const reply = await postJson(source.url, {});
      expect(reply.status).to.equal(500);
      expect(reply.json().error).to.equal("task_failed");
      expect(reply.text).to.not.include("secret internal detail");
      expect(reply.text).to.not.include("12345");
      await sleep(50);
      expect(await app.deadLetters.list()).to.have.length(0);
    });

    it("sends a Buffer the task returns as application/octet-stream", async () => {
      const bytes = Buffer.from([0, 1, 2, 254, 255]);
      const { source } = await startWebhook(makeApp, { reply: "result" }, { reply: () => bytes });
      const response = await fetch(source.url, { method: "POST", body: "{}" });
      expect(response.status).to.equal(200);
      expect(response.headers.get("content-type")).to.equal("application/octet-stream");
      expect(Buffer.from(await response.arrayBuffer()).equals(bytes)).to.equal(true);
    });

    // The task succeeded: an error status would have the sender send the event again and the
    // task run twice. The fixed answer goes, and an error line says why.
    const unencodable: Array<{ title: string; value: () => unknown }> = [
      { title: "a value JSON cannot encode (BigInt)", value: () => ({ total: 10n }) },
      { title: "a function", value: () => () => 1 },
    ];
    for (const u of unencodable) {
      it(`answers the fixed 202 with the event's id, runs the task once and logs why, when the task returns ${u.title}`, async () => {
        const lines: LogLine[] = [];
        const { source, events } = await startWebhook(makeApp, { reply: "result" }, { reply: u.value, app: { logger: recordingLogger(lines) } });
        const reply = await postJson(source.url, {});
        expect(reply.status).to.equal(202);
        const [first] = await events.waitFor(1);
        expect(reply.json()).to.deep.equal({ accepted: true, id: first.ctx.eventId });
        const logged = lines.find((l) => l.msg.includes("result cannot be sent"));
        expect(logged?.fields?.eventId).to.equal(first.ctx.eventId);
        // The server is still up, and nothing ran twice.
        expect((await postJson(source.url, {})).status).to.equal(202);
        await events.waitFor(2);
        await sleep(50);
        expect(events.received).to.have.length(2);
      });
    }

    // A WebhookResponse that would corrupt the answer is refused when the task makes it: the task failed.
    const refused: Array<{ title: string; value: () => unknown }> = [
      { title: "a WebhookResponse with a header value holding a line break", value: () => new WebhookResponse({ status_code: 200, headers: { "x-bad": "a\r\nInjected: yes" } }) },
      { title: "a WebhookResponse with an invalid header name", value: () => new WebhookResponse({ status_code: 200, headers: { "bad name": "x" } }) },
    ];
    for (const u of refused) {
      it(`answers 500 (and keeps serving) when the task returns ${u.title}`, async () => {
        const { source, events } = await startWebhook(makeApp, { reply: "result" }, { reply: u.value });
        const reply = await postJson(source.url, {});
        expect(reply.status).to.equal(500);
        expect(reply.headers.get("injected")).to.equal(null);
        expect(reply.json().error).to.be.a("string");
        // The server is still up.
        expect((await postJson(source.url, {})).status).to.equal(500);
        await events.waitFor(2);
      });
    }

    it("is not the default: a task's return value is not sent back to the caller", async () => {
      const { source, events } = await startWebhook(makeApp, {}, { reply: () => ({ secret: "do not leak" }) });
      const reply = await send(source.url, { body: "{}", headers: { "content-type": "application/json" } });
      expect(reply.status).to.equal(202);
      expect(reply.text).to.not.include("do not leak");
      await events.waitFor(1);
    });
  });
});
