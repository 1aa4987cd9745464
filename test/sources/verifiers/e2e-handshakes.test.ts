import { createHmac } from "node:crypto";
import { expect } from "chai";
import { MetaSignature, SlackSignature, ZoomSignature } from "../../../src/sources/webhook/verifiers";
import { sleep, startWebhook, useApps } from "../../helpers/app";
import { nodeRequest, send } from "../../helpers/http-client";
import { nowSeconds, reference } from "./helpers";

const SECRET = "handshake-secret";

describe("handshakes end to end (real sockets)", () => {
  const makeApp = useApps();

  describe("Slack url_verification", () => {
    const body = JSON.stringify({ token: "Jhj5dZrVaK7ZwHHjRyZWjbDl", challenge: "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P", type: "url_verification" });

    it("answers the challenge once the signature verifies, without an event", async () => {
      const { source, events } = await startWebhook(makeApp, { auth: new SlackSignature(SECRET) });
      const t = nowSeconds();
      const reply = await send(source.url, { body, headers: { "content-type": "application/json", "x-slack-signature": reference.slack(SECRET, t, body), "x-slack-request-timestamp": String(t) } });
      expect(reply.status).to.equal(200);
      expect(reply.json()).to.deep.equal({ challenge: "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P" });
      await sleep(50);
      expect(events.count).to.equal(0);
    });

    it("refuses an unsigned or stale url_verification with 401", async () => {
      const { source, events } = await startWebhook(makeApp, { auth: new SlackSignature(SECRET) });
      const unsigned = await send(source.url, { body, headers: { "content-type": "application/json" } });
      expect(unsigned.status).to.equal(401);
      const old = nowSeconds() - 3600;
      const stale = await send(source.url, { body, headers: { "content-type": "application/json", "x-slack-signature": reference.slack(SECRET, old, body), "x-slack-request-timestamp": String(old) } });
      expect(stale.status).to.equal(401);
      expect(stale.json().error).to.equal("timestamp_expired");
      await sleep(50);
      expect(events.count).to.equal(0);
    });

    it("works with parser raw too", async () => {
      const { source } = await startWebhook(makeApp, { auth: new SlackSignature(SECRET), parser: "raw" });
      const t = nowSeconds();
      const reply = await send(source.url, { body, headers: { "content-type": "application/json", "x-slack-signature": reference.slack(SECRET, t, body), "x-slack-request-timestamp": String(t) } });
      expect(reply.status).to.equal(200);
      expect(reply.json().challenge).to.be.a("string");
    });
  });

  describe("Meta subscription check (GET)", () => {
    it("answers hub.challenge on a POST-only source, 403 on a wrong token, and no event either way", async () => {
      const { source, events } = await startWebhook(makeApp, { methods: ["POST"], auth: new MetaSignature(SECRET, { verifyToken: "meta-verify-token" }) });
      const ok = await send(`${source.url}?hub.mode=subscribe&hub.challenge=1158201444&hub.verify_token=meta-verify-token`, { method: "GET" });
      expect(ok.status).to.equal(200);
      expect(ok.text).to.equal("1158201444");
      expect(ok.headers.get("content-type")).to.match(/^text\/plain/);

      const wrong = await send(`${source.url}?hub.mode=subscribe&hub.challenge=1158201444&hub.verify_token=guess`, { method: "GET" });
      expect(wrong.status).to.equal(403);
      expect(wrong.json().error).to.equal("verify_token_mismatch");
      expect(wrong.text).to.not.include("meta-verify-token");

      // Not a subscription check: GET is outside the source's methods.
      const plainGet = await send(source.url, { method: "GET" });
      expect(plainGet.status).to.equal(405);
      expect(plainGet.json().error).to.equal("method_not_allowed");
      await sleep(50);
      expect(events.count).to.equal(0);
    });

    it("a signed delivery sent again with GET on a POST-only source is 405 and makes no event", async () => {
      const { source, events } = await startWebhook(makeApp, { methods: ["POST"], auth: new MetaSignature(SECRET, { verifyToken: "t" }) });
      const body = JSON.stringify({ object: "page", entry: [{ id: "1", changes: [{ field: "feed", value: {} }] }] });
      const reply = await nodeRequest(source.url, { method: "GET", body, headers: { "content-type": "application/json", "x-hub-signature-256": reference.meta(SECRET, body) } });
      expect(reply.status).to.equal(405);
      expect(reply.json().error).to.equal("method_not_allowed");
      expect(reply.headers.allow).to.equal("POST");
      await sleep(50);
      expect(events.count).to.equal(0);
    });

    it("still verifies POSTed events", async () => {
      const { source, events } = await startWebhook(makeApp, { auth: new MetaSignature(SECRET, { verifyToken: "t" }) });
      const body = JSON.stringify({ object: "page", entry: [{ id: "1", messaging: [] }] });
      expect((await send(source.url, { body, headers: { "content-type": "application/json", "x-hub-signature-256": reference.meta(SECRET, body) } })).status).to.equal(202);
      expect((await send(source.url, { body, headers: { "content-type": "application/json", "x-hub-signature-256": reference.meta("other", body) } })).status).to.equal(401);
      await events.waitFor(1);
      await sleep(30);
      expect(events.count).to.equal(1);
    });

    it("without verifyToken, GET is not answered: it stays outside the source's methods (405)", async () => {
      const { source } = await startWebhook(makeApp, { methods: ["POST"], auth: new MetaSignature(SECRET) });
      const reply = await send(`${source.url}?hub.mode=subscribe&hub.challenge=1&hub.verify_token=x`, { method: "GET" });
      expect(reply.status).to.equal(405);
    });
  });

  describe("Zoom endpoint.url_validation", () => {
    it("answers plainToken and encryptedToken after verifying, without an event", async () => {
      const { source, events } = await startWebhook(makeApp, { auth: new ZoomSignature(SECRET) });
      const body = JSON.stringify({ payload: { plainToken: "qgg8vlvZRS6UYooatFL8Aw" }, event_ts: Date.now(), event: "endpoint.url_validation" });
      const t = nowSeconds();
      const reply = await send(source.url, { body, headers: { "content-type": "application/json", "x-zm-signature": reference.zoom(SECRET, t, body), "x-zm-request-timestamp": String(t) } });
      expect(reply.status).to.equal(200);
      expect(reply.json()).to.deep.equal({
        plainToken: "qgg8vlvZRS6UYooatFL8Aw",
        encryptedToken: createHmac("sha256", SECRET).update("qgg8vlvZRS6UYooatFL8Aw").digest("hex"),
      });
      const unsigned = await send(source.url, { body, headers: { "content-type": "application/json" } });
      expect(unsigned.status).to.equal(401);
      await sleep(50);
      expect(events.count).to.equal(0);
    });
  });
});
