import { expect } from "chai";
import { sleep, startWebhook, useApps } from "../../helpers/app";
import { send } from "../../helpers/http-client";

/** JSON arrays nested `depth` levels: 2 bytes a level. */
export function nestedJson(depth: number): string {
  return "[".repeat(depth) + "]".repeat(depth);
}

describe("WebhookSource: bodies the store cannot hold are refused at the door", () => {
  const makeApp = useApps();

  it("refuses JSON nested 20,000 levels (40 KB) with 400 body_too_deep and makes no event", async () => {
    const { source, events } = await startWebhook(makeApp);
    const reply = await send(source.url, { body: nestedJson(20_000), headers: { "content-type": "application/json" } });
    expect(reply.status).to.equal(400);
    expect(reply.json()).to.deep.equal({ error: "body_too_deep", message: "the JSON body nests deeper than 128 levels" });
    await sleep(50);
    expect(events.count).to.equal(0);
  });

  it("accepts 128 levels by default, and the limit is the source's maxBodyDepth", async () => {
    const { source, events } = await startWebhook(makeApp);
    expect((await send(source.url, { body: nestedJson(128), headers: { "content-type": "application/json" } })).status).to.equal(202);
    expect((await send(source.url, { body: nestedJson(129), headers: { "content-type": "application/json" } })).status).to.equal(400);
    await events.waitFor(1);
    const raised = await startWebhook(makeApp, { maxBodyDepth: 300 });
    expect((await send(raised.source.url, { body: nestedJson(300), headers: { "content-type": "application/json" } })).status).to.equal(202);
    expect((await send(raised.source.url, { body: nestedJson(301), headers: { "content-type": "application/json" } })).status).to.equal(400);
  });

  it("does not count brackets inside strings, escaped quotes included", async () => {
    const { source, events } = await startWebhook(makeApp, { maxBodyDepth: 2 });
    const body = JSON.stringify({ a: { text: '[[[[{{{{ \\" "[[[' } });
    const reply = await send(source.url, { body, headers: { "content-type": "application/json" } });
    expect(reply.status).to.equal(202);
    const [{ event }] = await events.waitFor(1);
    expect(event.body).to.deep.equal(JSON.parse(body));
  });
});
