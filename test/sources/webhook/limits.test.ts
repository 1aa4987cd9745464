import { expect } from "chai";
import { sleep, startWebhook, useApps } from "../../helpers/app";
import { nodeRequest } from "../../helpers/http-client";
import { chunked, httpRequest, RawClient } from "../../helpers/raw-http";

describe("WebhookSource: body size limit", () => {
  const makeApp = useApps();

  it("accepts a body of exactly maxBodyBytes", async () => {
    const { source, events } = await startWebhook(makeApp, { maxBodyBytes: 1000, parser: "raw" });
    const body = Buffer.alloc(1000, 0x61);
    const reply = await nodeRequest(source.url, { headers: { "content-length": body.length }, body });
    expect(reply.status).to.equal(202);
    expect(((await events.waitFor(1))[0].event.body as Buffer).equals(body)).to.equal(true);
  });

  it("refuses a declared Content-Length over the limit with 413 before reading the body, and makes no event", async () => {
    const { source, events } = await startWebhook(makeApp, { maxBodyBytes: 1000 });
    const client = await RawClient.connect(source.port);
    // Only the headers are sent: the answer must not wait for the body.
    await client.write(httpRequest("POST", "/hook", { "Content-Type": "application/json", "Content-Length": 1001 }));
    const response = await client.readResponse(1_000);
    expect(response.status).to.equal(413);
    expect(response.headers["content-type"]).to.equal("application/json");
    expect(response.json().error).to.equal("body_too_large");
    expect(response.headers.connection).to.equal("close");
    expect(await client.waitClosed(1_000)).to.equal(true);
    client.destroy();
    await sleep(50);
    expect(events.count).to.equal(0);
  });

  it("refuses a chunked body that grows over the limit with 413, and makes no event", async () => {
    const { source, events } = await startWebhook(makeApp, { maxBodyBytes: 1000 });
    const client = await RawClient.connect(source.port);
    await client.write(httpRequest("POST", "/hook", { "Content-Type": "application/octet-stream", "Transfer-Encoding": "chunked" }));
    let response;
    // Keep streaming 400-byte chunks until the server answers; it must before we send 4 kB.
    for (let i = 0; i < 10 && response === undefined; i++) {
      await client.write(`190\r\n${"b".repeat(400)}\r\n`).catch(() => undefined);
      response = await client.readResponse(100).catch(() => undefined);
    }
    expect(response, "answered before the stream ended").to.not.equal(undefined);
    expect(response!.status).to.equal(413);
    expect(response!.json().error).to.equal("body_too_large");
    expect(await client.waitClosed(1_000)).to.equal(true);
    client.destroy();
    await sleep(50);
    expect(events.count).to.equal(0);
  });

  it("refuses a complete chunked body over the limit with 413", async () => {
    const { source, events } = await startWebhook(makeApp, { maxBodyBytes: 10 });
    const client = await RawClient.connect(source.port);
    await client.write(Buffer.concat([httpRequest("POST", "/hook", { "Transfer-Encoding": "chunked" }), chunked("123456", "7890", "X")]));
    const response = await client.readResponse();
    client.destroy();
    expect(response.status).to.equal(413);
    await sleep(50);
    expect(events.count).to.equal(0);
  });

  it("uses 1 MiB by default", async () => {
    const { source, events } = await startWebhook(makeApp, { parser: "raw" });
    const ok = Buffer.alloc(1024 * 1024, 1);
    expect((await nodeRequest(source.url, { headers: { "content-length": ok.length }, body: ok })).status).to.equal(202);
    const client = await RawClient.connect(source.port);
    await client.write(httpRequest("POST", "/hook", { "Content-Length": 1024 * 1024 + 1 }));
    expect((await client.readResponse()).status).to.equal(413);
    client.destroy();
    await events.waitFor(1);
    await sleep(30);
    expect(events.count).to.equal(1);
  });
});
