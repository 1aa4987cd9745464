import { expect } from "chai";
import { sleep, startWebhook, useApps } from "../../helpers/app";
import { nodeRequest, send } from "../../helpers/http-client";

describe("WebhookSource: Content-Type parameters, form escapes and echoed headers", () => {
  const makeApp = useApps();

  it("takes no charset from inside another parameter's quotes", async () => {
    const { source, events } = await startWebhook(makeApp);
    const body = Buffer.from(JSON.stringify({ c: "\u00e9" }));
    const reply = await nodeRequest(source.url, { headers: { "content-type": 'application/json; foo="x;charset=latin1"', "content-length": body.length }, body });
    expect(reply.status).to.equal(202);
    const [{ event }] = await events.waitFor(1);
    expect(event.body).to.deep.equal({ c: "\u00e9" });
  });

  it("reads a quoted charset parameter, after a quoted one holding a semicolon", async () => {
    const { source, events } = await startWebhook(makeApp);
    const body = Buffer.from([0x63, 0x61, 0x66, 0xe9]);
    const reply = await nodeRequest(source.url, { headers: { "content-type": 'text/plain; x="a;charset=utf-8"; charset="ISO-8859-1"', "content-length": body.length }, body });
    expect(reply.status).to.equal(202);
    const [{ event }] = await events.waitFor(1);
    expect(event.body).to.equal("caf\u00e9");
  });

  it("reads the charset after a parameter without a value (as it was read before parameters were parsed)", async () => {
    const { source, events } = await startWebhook(makeApp);
    const body = Buffer.from([0x63, 0x61, 0x66, 0xe9]);
    const reply = await nodeRequest(source.url, { headers: { "content-type": "text/plain; format; charset=ISO-8859-1", "content-length": body.length }, body });
    expect(reply.status).to.equal(202);
    const [{ event }] = await events.waitFor(1);
    expect(event.body).to.equal("caf\u00e9");
  });

  it("refuses a form whose percent-escapes are not valid UTF-8 with 400 invalid_form, not U+FFFD", async () => {
    const { source, events } = await startWebhook(makeApp);
    const reply = await send(source.url, { body: "name=caf%E9", headers: { "content-type": "application/x-www-form-urlencoded" } });
    expect(reply.status).to.equal(400);
    expect(reply.json()).to.deep.equal({ error: "invalid_form", message: "the form body has percent-escaped bytes that are not valid UTF-8" });
    await sleep(50);
    expect(events.count).to.equal(0);
  });

  it("decodes a form's percent-escapes in its declared charset", async () => {
    const { source, events } = await startWebhook(makeApp);
    const reply = await send(source.url, { body: "name=caf%E9&ok=%E2%9C", headers: { "content-type": "application/x-www-form-urlencoded; charset=latin1" } });
    expect(reply.status).to.equal(202);
    const [{ event }] = await events.waitFor(1);
    expect(event.body).to.deep.equal({ name: "caf\u00e9", ok: "\u00e2\u009c" });
  });

  it("quotes at most a few dozen printable characters of a header in a 415", async () => {
    const { source } = await startWebhook(makeApp);
    const coding = await nodeRequest(source.url, { headers: { "content-encoding": `x${"y".repeat(6000)}`, "content-type": "application/json", "content-length": 2 }, body: "{}" });
    expect(coding.status).to.equal(415);
    const codingMessage = coding.json<{ message: string }>().message;
    expect(codingMessage.length).to.be.below(120);
    expect(codingMessage).to.match(/^content encoding "xyyy/);
    const charset = await nodeRequest(source.url, { headers: { "content-type": `text/plain; charset=x-${"z".repeat(6000)}`, "content-length": 2 }, body: "hi" });
    expect(charset.status).to.equal(415);
    expect(charset.json<{ message: string }>().message.length).to.be.below(120);
  });
});
