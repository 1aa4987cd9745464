import { expect } from "chai";
import { sleep, startWebhook, useApps } from "../../helpers/app";
import { nodeRequest, send } from "../../helpers/http-client";
import { httpRequest, rawRequest } from "../../helpers/raw-http";
import type { ParserMode } from "../../../src/index";

/** Every byte value, so that no decoding can pass unnoticed. */
const ALL_BYTES = Buffer.from(Array.from({ length: 256 }, (_, i) => i));

describe("WebhookSource: body parsers", () => {
  const makeApp = useApps();

  describe("auto (the default) chooses from Content-Type", () => {
    const cases: Array<{ title: string; contentType: string; body: Buffer; expected: unknown }> = [
      { title: "application/json", contentType: "application/json", body: Buffer.from('{"a":[1,2,{"b":null}],"c":"\u00e9\u2713"}'), expected: { a: [1, 2, { b: null }], c: "\u00e9\u2713" } },
      { title: "application/json with charset and odd case", contentType: "Application/JSON; charset=UTF-8", body: Buffer.from("[1,2,3]"), expected: [1, 2, 3] },
      { title: "a vendor +json type", contentType: "application/vnd.x+json", body: Buffer.from('{"vendor":true}'), expected: { vendor: true } },
      { title: "a JSON scalar", contentType: "application/json", body: Buffer.from('"just a string"'), expected: "just a string" },
      { title: "JSON with a UTF-8 BOM", contentType: "application/json", body: Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"bom":1}')]), expected: { bom: 1 } },
      { title: "a form with repeated keys", contentType: "application/x-www-form-urlencoded", body: Buffer.from("a=1&a=2&b=hello+world&c=%E2%9C%93&d="), expected: { a: ["1", "2"], b: "hello world", c: "\u2713", d: "" } },
      { title: "text/plain with a utf-8 charset", contentType: "text/plain; charset=utf-8", body: Buffer.from("h\u00e9llo \u2713\n"), expected: "h\u00e9llo \u2713\n" },
      { title: "text/csv without a charset (UTF-8)", contentType: "text/csv", body: Buffer.from("a,b\n1,\u00e9\n"), expected: "a,b\n1,\u00e9\n" },
      { title: "text/plain in latin1", contentType: "text/plain; charset=ISO-8859-1", body: Buffer.from([0x63, 0x61, 0x66, 0xe9]), expected: "caf\u00e9" },
      { title: "a latin1 form", contentType: "application/x-www-form-urlencoded; charset=latin1", body: Buffer.from([0x6e, 0x3d, 0xe9]), expected: { n: "\u00e9" } },
    ];
    for (const c of cases) {
      it(`parses ${c.title}`, async () => {
        const { source, events } = await startWebhook(makeApp);
        const reply = await nodeRequest(source.url, { headers: { "content-type": c.contentType, "content-length": c.body.length }, body: c.body });
        expect(reply.status).to.equal(202);
        const [{ event, ctx }] = await events.waitFor(1);
        expect(event.body).to.deep.equal(c.expected);
        expect(ctx.rawBody.equals(c.body)).to.equal(true);
      });
    }

    it("keeps every field of a large form (no silent cap at 1000 keys)", async () => {
      const { source, events } = await startWebhook(makeApp);
      const body = Array.from({ length: 1500 }, (_, i) => `f${i}=${i}`).join("&");
      const reply = await send(source.url, { body, headers: { "content-type": "application/x-www-form-urlencoded" } });
      expect(reply.status).to.equal(202);
      const [{ event }] = await events.waitFor(1);
      const form = event.body as Record<string, string>;
      expect(Object.keys(form)).to.have.length(1500);
      expect(form.f1499).to.equal("1499");
    });

    it("gives application/octet-stream as a Buffer of the exact bytes", async () => {
      const { source, events } = await startWebhook(makeApp);
      const reply = await nodeRequest(source.url, { headers: { "content-type": "application/octet-stream", "content-length": ALL_BYTES.length }, body: ALL_BYTES });
      expect(reply.status).to.equal(202);
      const [{ event }] = await events.waitFor(1);
      expect(Buffer.isBuffer(event.body)).to.equal(true);
      expect((event.body as Buffer).equals(ALL_BYTES)).to.equal(true);
    });

    it("gives a body without Content-Type as raw bytes", async () => {
      const { source, events } = await startWebhook(makeApp);
      const body = Buffer.from('{"looks":"like json"}');
      const response = await rawRequest(source.port, httpRequest("POST", "/hook", {}, body));
      expect(response.status).to.equal(202);
      const [{ event }] = await events.waitFor(1);
      expect(event.headers["content-type"]).to.equal(undefined);
      expect(Buffer.isBuffer(event.body)).to.equal(true);
      expect((event.body as Buffer).equals(body)).to.equal(true);
    });

    it("refuses an unknown charset with 415 unsupported_charset and makes no event", async () => {
      const { source, events } = await startWebhook(makeApp);
      const reply = await send(source.url, { body: "hello", headers: { "content-type": "text/plain; charset=x-no-such-charset" } });
      expect(reply.status).to.equal(415);
      expect(reply.headers.get("content-type")).to.match(/^application\/json/);
      expect(reply.json()).to.include({ error: "unsupported_charset" });
      expect(reply.json().message).to.be.a("string");
      await sleep(50);
      expect(events.count).to.equal(0);
    });

    it("refuses text that is not valid UTF-8 with 400 and makes no event", async () => {
      const { source, events } = await startWebhook(makeApp);
      const body = Buffer.from([0x68, 0xff, 0xfe, 0x69]);
      const reply = await nodeRequest(source.url, { headers: { "content-type": "text/plain", "content-length": body.length }, body });
      expect(reply.status).to.equal(400);
      expect(reply.json()).to.include({ error: "invalid_text" });
      await sleep(50);
      expect(events.count).to.equal(0);
    });

    it("refuses JSON that is not valid UTF-8 with 400 invalid_json (no silent U+FFFD)", async () => {
      const { source, events } = await startWebhook(makeApp);
      const body = Buffer.concat([Buffer.from('{"name":"caf'), Buffer.from([0xe9]), Buffer.from('"}')]);
      const reply = await nodeRequest(source.url, { headers: { "content-type": "application/json", "content-length": body.length }, body });
      expect(reply.status).to.equal(400);
      expect(reply.json()).to.include({ error: "invalid_json" });
      await sleep(50);
      expect(events.count).to.equal(0);
    });
  });

  describe("explicit modes ignore Content-Type", () => {
    const body = '{"a":1}';
    const cases: Array<{ parser: ParserMode; contentType: string; body: string; check: (value: unknown) => void }> = [
      { parser: "json", contentType: "text/plain", body, check: (v) => expect(v).to.deep.equal({ a: 1 }) },
      { parser: "json", contentType: "application/octet-stream", body: "[true]", check: (v) => expect(v).to.deep.equal([true]) },
      { parser: "form", contentType: "application/json", body: "x=1&x=2&y=z", check: (v) => expect(v).to.deep.equal({ x: ["1", "2"], y: "z" }) },
      { parser: "text", contentType: "application/json", body, check: (v) => expect(v).to.equal(body) },
      { parser: "raw", contentType: "application/json", body, check: (v) => expect(Buffer.isBuffer(v) && v.equals(Buffer.from(body))).to.equal(true) },
      { parser: "raw", contentType: "text/plain", body: "\u00e9", check: (v) => expect(Buffer.isBuffer(v) && v.equals(Buffer.from([0xc3, 0xa9]))).to.equal(true) },
    ];
    for (const c of cases) {
      it(`${c.parser} with Content-Type ${c.contentType}`, async () => {
        const { source, events } = await startWebhook(makeApp, { parser: c.parser });
        const reply = await send(source.url, { body: c.body, headers: { "content-type": c.contentType } });
        expect(reply.status).to.equal(202);
        const [{ event }] = await events.waitFor(1);
        c.check(event.body);
      });
    }

    it("json refuses a body that is not JSON, whatever its Content-Type", async () => {
      const { source, events } = await startWebhook(makeApp, { parser: "json" });
      const reply = await send(source.url, { body: "a=1", headers: { "content-type": "application/x-www-form-urlencoded" } });
      expect(reply.status).to.equal(400);
      expect(reply.json()).to.include({ error: "invalid_json" });
      await sleep(50);
      expect(events.count).to.equal(0);
    });
  });

  describe("empty bodies", () => {
    const cases: Array<{ parser: ParserMode; contentType?: string; expected: "null" | "empty-buffer" }> = [
      { parser: "json", contentType: "application/json", expected: "null" },
      { parser: "form", contentType: "application/x-www-form-urlencoded", expected: "null" },
      { parser: "text", contentType: "text/plain", expected: "null" },
      { parser: "raw", contentType: "application/octet-stream", expected: "empty-buffer" },
      { parser: "auto", contentType: "application/json", expected: "null" },
      { parser: "auto", contentType: "application/x-www-form-urlencoded", expected: "null" },
      { parser: "auto", contentType: "text/plain", expected: "null" },
      { parser: "auto", contentType: undefined, expected: "empty-buffer" },
    ];
    for (const c of cases) {
      it(`${c.parser}${c.contentType ? ` (${c.contentType})` : " without Content-Type"} gives ${c.expected === "null" ? "null" : "an empty Buffer"}`, async () => {
        const { source, events } = await startWebhook(makeApp, { parser: c.parser });
        const headers: Record<string, string> = { "Content-Length": "0" };
        if (c.contentType) headers["Content-Type"] = c.contentType;
        const response = await rawRequest(source.port, httpRequest("POST", "/hook", headers));
        expect(response.status).to.equal(202);
        const [{ event, ctx }] = await events.waitFor(1);
        if (c.expected === "null") expect(event.body).to.equal(null);
        else expect(Buffer.isBuffer(event.body) && (event.body as Buffer).length === 0).to.equal(true);
        expect(ctx.rawBody.length).to.equal(0);
      });
    }
  });

  describe("bodies their parser cannot read: 400, no event", () => {
    const cases: Array<{ title: string; contentType: string; body: string; code: string }> = [
      { title: "truncated JSON", contentType: "application/json", body: '{"a":', code: "invalid_json" },
      { title: "JSON with trailing garbage", contentType: "application/json", body: '{"a":1} x', code: "invalid_json" },
      { title: "single-quoted JSON", contentType: "application/vnd.x+json", body: "{'a':1}", code: "invalid_json" },
      { title: "a form with a bad percent-escape", contentType: "application/x-www-form-urlencoded", body: "a=%zz&b=1", code: "invalid_form" },
      { title: "a form with a lone percent sign", contentType: "application/x-www-form-urlencoded", body: "discount=100%", code: "invalid_form" },
    ];
    for (const c of cases) {
      it(`${c.title} → ${c.code}`, async () => {
        const { source, events } = await startWebhook(makeApp);
        const reply = await send(source.url, { body: c.body, headers: { "content-type": c.contentType } });
        expect(reply.status).to.equal(400);
        expect(reply.headers.get("content-type")).to.match(/^application\/json/);
        const answer = reply.json();
        expect(answer.error).to.equal(c.code);
        expect(answer.message).to.be.a("string").and.not.equal("");
        await sleep(50);
        expect(events.count).to.equal(0);
      });
    }
  });
});
