import { expect } from "chai";
import { WebhookError, WebhookResponse } from "../../../src/index";
import { SlackSignature } from "../../../src/sources/webhook/verifiers";
import { sleep, startWebhook, useApps } from "../../helpers/app";
import { send } from "../../helpers/http-client";
import { nowSeconds, reference } from "./helpers";

const SIGNING_SECRET = "slack-signing-secret-e2e";

/** A slash command as Slack posts it: a form body, signed. */
function slashCommand(text: string, secret = SIGNING_SECRET): { body: string; headers: Record<string, string> } {
  const body = new URLSearchParams({
    token: "gIkuvaNzQIHg97ATvDxqgjtO",
    team_id: "T0001",
    channel_id: "C2147483705",
    user_id: "U2147483697",
    user_name: "Steve",
    command: "/weather",
    text,
    response_url: "https://hooks.slack.com/commands/1234/5678",
    trigger_id: "13345224609.738474920.8088930838d88f008e0",
  }).toString();
  const t = nowSeconds();
  return { body, headers: { "content-type": "application/x-www-form-urlencoded", "x-slack-signature": reference.slack(secret, t, body), "x-slack-request-timestamp": String(t) } };
}

describe("a Slack slash command end to end (reply: result)", () => {
  const makeApp = useApps();

  it("gets the handler's text as its reply", async () => {
    const { source, events } = await startWebhook(
      makeApp,
      { auth: new SlackSignature(SIGNING_SECRET), reply: "result", ackTimeoutMs: 2_500 },
      { reply: (_ctx, event) => `Weather in ${(event.body as Record<string, string>).text}: sunny ☀` },
    );
    const command = slashCommand("Zürich");
    const reply = await send(source.url, { body: command.body, headers: command.headers });
    expect(reply.status).to.equal(200);
    expect(reply.headers.get("content-type")).to.match(/^text\/plain/);
    expect(reply.text).to.equal("Weather in Zürich: sunny ☀");
    const [{ event }] = await events.waitFor(1);
    expect(event.body).to.include({ command: "/weather", text: "Zürich", user_name: "Steve" });
    expect(event.headers).to.not.have.property("x-slack-signature");
  });

  it("can answer with a WebhookResponse (JSON blocks, in_channel)", async () => {
    const { source } = await startWebhook(
      makeApp,
      { auth: new SlackSignature(SIGNING_SECRET), reply: "result" },
      { reply: () => new WebhookResponse({ status_code: 200, body: { response_type: "in_channel", text: "Deploy started" } }) },
    );
    const command = slashCommand("deploy");
    const reply = await send(source.url, { body: command.body, headers: command.headers });
    expect(reply.status).to.equal(200);
    expect(reply.json()).to.deep.equal({ response_type: "in_channel", text: "Deploy started" });
  });

  it("a WebhookError from the handler chooses the status and body", async () => {
    const { source } = await startWebhook(
      makeApp,
      { auth: new SlackSignature(SIGNING_SECRET), reply: "result" },
      { reply: () => { throw new WebhookError(400, "unknown_city", "no such city"); }, retry: { attempts: 1 } },
    );
    const command = slashCommand("Atlantis");
    const reply = await send(source.url, { body: command.body, headers: command.headers });
    expect(reply.status).to.equal(400);
    expect(reply.json()).to.deep.equal({ error: "unknown_city", message: "no such city" });
  });

  it("a forged command never reaches the handler", async () => {
    const { source, events } = await startWebhook(makeApp, { auth: new SlackSignature(SIGNING_SECRET), reply: "result" }, { reply: () => "should not run" });
    const forged = slashCommand("Paris", "not-the-signing-secret");
    const reply = await send(source.url, { body: forged.body, headers: forged.headers });
    expect(reply.status).to.equal(401);
    expect(reply.json().error).to.equal("signature_mismatch");
    await sleep(50);
    expect(events.count).to.equal(0);
  });

  it("past the deadline the fixed response goes out and the task carries on", async () => {
    let finished = false;
    const { source, events } = await startWebhook(
      makeApp,
      { auth: new SlackSignature(SIGNING_SECRET), reply: "result", ackTimeoutMs: 150, response: new WebhookResponse({ status_code: 200, body: "Working on it…" }) },
      { reply: async () => { await sleep(400); finished = true; return "too late"; } },
    );
    const command = slashCommand("slow");
    const started = Date.now();
    const reply = await send(source.url, { body: command.body, headers: command.headers });
    expect(reply.status).to.equal(200);
    expect(reply.text).to.equal("Working on it…");
    expect(Date.now() - started).to.be.below(380);
    await events.waitFor(1);
    await sleep(400);
    expect(finished).to.equal(true);
  });
});
