import { expect } from "chai";
import { BearerAuth, type WebhookAuth } from "../../../src/index";
import { sleep, startWebhook, useApps } from "../../helpers/app";
import { postJson } from "../../helpers/http-client";
import { httpRequest, RawClient } from "../../helpers/raw-http";

const TOKEN = "s3cr3t-token-value";

describe("WebhookSource: BearerAuth", () => {
  const makeApp = useApps();

  const refusals: Array<{ title: string; authorization?: string }> = [
    { title: "no Authorization header" },
    { title: "a wrong token", authorization: "Bearer not-the-token" },
    { title: "the token with a suffix", authorization: `Bearer ${TOKEN}x` },
    { title: "a prefix of the token", authorization: `Bearer ${TOKEN.slice(0, -1)}` },
    { title: "another scheme", authorization: `Basic ${Buffer.from(`user:${TOKEN}`).toString("base64")}` },
    { title: "the bare token without a scheme", authorization: TOKEN },
    { title: "an empty bearer", authorization: "Bearer " },
  ];
  for (const r of refusals) {
    it(`answers ${r.title} with 401, WWW-Authenticate, JSON unauthorized, and no event`, async () => {
      const { source, events } = await startWebhook(makeApp, { auth: new BearerAuth(TOKEN) });
      const headers: Record<string, string> = {};
      if (r.authorization !== undefined) headers.authorization = r.authorization;
      const reply = await postJson(source.url, { x: 1 }, headers);
      expect(reply.status).to.equal(401);
      expect(reply.headers.get("www-authenticate")).to.equal('Bearer realm="webhook"');
      expect(reply.headers.get("content-type")).to.match(/^application\/json/);
      expect(reply.json().error).to.equal("unauthorized");
      expect(reply.text).to.not.include(TOKEN);
      await sleep(50);
      expect(events.count).to.equal(0);
    });
  }

  it("accepts the right token and keeps the Authorization header out of the event", async () => {
    const { source, events } = await startWebhook(makeApp, { auth: new BearerAuth(TOKEN) });
    const reply = await postJson(source.url, { x: 1 }, { authorization: `Bearer ${TOKEN}`, "x-other": "kept" });
    expect(reply.status).to.equal(202);
    const [{ event }] = await events.waitFor(1);
    expect(event.body).to.deep.equal({ x: 1 });
    expect(event.headers).to.not.have.property("authorization");
    expect(event.headers["x-other"]).to.equal("kept");
    expect(JSON.stringify(event)).to.not.include(TOKEN);
  });

  it("accepts the scheme in any case, and any of several tokens (rotation)", async () => {
    const { source, events } = await startWebhook(makeApp, { auth: new BearerAuth(["old-token", TOKEN]) });
    expect((await postJson(source.url, 1, { authorization: `bearer ${TOKEN}` })).status).to.equal(202);
    expect((await postJson(source.url, 2, { authorization: "Bearer old-token" })).status).to.equal(202);
    expect((await postJson(source.url, 3, { authorization: "Bearer other" })).status).to.equal(401);
    await events.waitFor(2);
    await sleep(30);
    expect(events.events.map((e) => e.body)).to.deep.equal([1, 2]);
  });

  it("keeps the connection usable after a 401 whose body was never read", async () => {
    const { source, events } = await startWebhook(makeApp, { auth: new BearerAuth(TOKEN) });
    const client = await RawClient.connect(source.port);
    const body = JSON.stringify({ pad: "x".repeat(50_000) });
    await client.write(httpRequest("POST", "/hook", { "Content-Type": "application/json" }, body));
    const refused = await client.readResponse();
    expect(refused.status).to.equal(401);
    await client.write(httpRequest("POST", "/hook", { "Content-Type": "application/json", Authorization: `Bearer ${TOKEN}` }, '{"second":true}'));
    const accepted = await client.readResponse();
    expect(accepted.status).to.equal(202);
    client.destroy();
    const [{ event }] = await events.waitFor(1);
    expect(event.body).to.deep.equal({ second: true });
  });

  it("fails closed with a custom auth whose verify throws: 401, no event", async () => {
    const auth: WebhookAuth = {
      scheme: "custom",
      needsBody: true,
      verify: () => {
        throw new Error("verifier bug");
      },
    };
    const { source, events } = await startWebhook(makeApp, { auth });
    const reply = await postJson(source.url, {});
    expect(reply.status).to.equal(401);
    expect(reply.text).to.not.include("verifier bug");
    await sleep(50);
    expect(events.count).to.equal(0);
  });

  it("refuses (fails closed), makes no event and keeps serving when a custom auth's handshake throws", async () => {
    let calls = 0;
    const auth: WebhookAuth = {
      scheme: "custom",
      needsBody: false,
      verify: () => true,
      handshake: {
        beforeVerify: () => {
          if (++calls === 1) throw new Error("handshake bug");
          return undefined;
        },
      },
    };
    const { source, events } = await startWebhook(makeApp, { auth });
    const first = await postJson(source.url, { n: 1 });
    expect(first.status).to.be.oneOf([401, 500]);
    expect(first.json().error).to.be.a("string");
    expect(first.text).to.not.include("handshake bug");
    expect((await postJson(source.url, { n: 2 })).status).to.equal(202);
    await events.waitFor(1);
    await sleep(30);
    expect(events.events.map((e) => e.body)).to.deep.equal([{ n: 2 }]);
  });

  it("never shows the token when the auth object is logged or serialised", () => {
    const auth = new BearerAuth(TOKEN);
    expect(JSON.stringify(auth)).to.not.include(TOKEN);
    expect(require("node:util").inspect(auth, { depth: 5 })).to.not.include(TOKEN);
  });
});
