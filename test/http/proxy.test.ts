import { expect } from "chai";
import type { TrustProxy } from "../../src/index";
import { startWebhook, useApps } from "../helpers/app";
import { httpRequest, RawClient } from "../helpers/raw-http";

describe("HTTP: event.client behind trusted proxies", () => {
  const makeApp = useApps();

  /** Sends one request with `headers` and returns [client the event names, the test's own local port]. */
  async function clientFor(trust: { app?: TrustProxy; source?: TrustProxy }, headers: Record<string, string>): Promise<{ client: [string, number]; localPort: number; headers: Record<string, string> }> {
    const { source, events } = await startWebhook(makeApp, trust.source === undefined ? {} : { trustProxy: trust.source }, {
      app: trust.app === undefined ? {} : { trustProxy: trust.app },
    });
    const socket = await RawClient.connect(source.port);
    await socket.write(httpRequest("POST", "/hook", { "Content-Type": "application/json", ...headers }, "{}"));
    expect((await socket.readResponse()).status).to.equal(202);
    socket.destroy();
    const [{ event }] = await events.waitFor(1);
    return { client: event.client, localPort: socket.localPort, headers: event.headers };
  }

  it("takes the client from X-Forwarded-For when the peer is a trusted proxy (loopback)", async () => {
    const { client } = await clientFor({ app: "loopback" }, { "X-Forwarded-For": "203.0.113.7" });
    expect(client).to.deep.equal(["203.0.113.7", 0]);
  });

  it("reads a port some proxies put in X-Forwarded-For, IPv4 and bracketed IPv6", async () => {
    const v4 = await clientFor({ app: "loopback" }, { "X-Forwarded-For": "203.0.113.7:51234" });
    expect(v4.client).to.deep.equal(["203.0.113.7", 51234]);
    const v6 = await clientFor({ app: "loopback" }, { "X-Forwarded-For": "[2001:db8::5]:8443" });
    expect(v6.client).to.deep.equal(["2001:db8::5", 8443]);
    const bare = await clientFor({ app: "loopback" }, { "X-Forwarded-For": "2001:db8::6" });
    expect(bare.client).to.deep.equal(["2001:db8::6", 0]);
  });

  it("takes the client and port from Forwarded, IPv6 in brackets", async () => {
    const { client } = await clientFor({ app: "loopback" }, { Forwarded: 'for="[2001:db8::1]:4711";proto=https;host=example.com' });
    expect(client).to.deep.equal(["2001:db8::1", 4711]);
  });

  it("prefers Forwarded over X-Forwarded-For", async () => {
    const { client } = await clientFor({ app: "loopback" }, { Forwarded: "for=192.0.2.60:1234", "X-Forwarded-For": "198.51.100.9" });
    expect(client).to.deep.equal(["192.0.2.60", 1234]);
  });

  it("walks the chain through trusted hops and stops at the first untrusted one", async () => {
    // Nearest hop last: 127.0.0.2 is another loopback proxy (trusted), 198.51.100.1 is not trusted,
    // so what it claims (the spoofable 10.0.0.1) is ignored.
    const { client } = await clientFor({ app: "loopback" }, { "X-Forwarded-For": "10.0.0.1, 198.51.100.1, 127.0.0.2" });
    expect(client).to.deep.equal(["198.51.100.1", 0]);
  });

  it("trusts a number of hops", async () => {
    const { client } = await clientFor({ app: 1 }, { "X-Forwarded-For": "10.0.0.1, 198.51.100.1" });
    expect(client).to.deep.equal(["198.51.100.1", 0]);
  });

  it("ignores forwarding headers from an untrusted peer (the default)", async () => {
    const { client, localPort, headers } = await clientFor({}, { "X-Forwarded-For": "203.0.113.7", Forwarded: "for=192.0.2.60" });
    expect(client).to.deep.equal(["127.0.0.1", localPort]);
    // The headers themselves stay visible to the task.
    expect(headers["x-forwarded-for"]).to.equal("203.0.113.7");
  });

  it("ignores forwarding headers when the trusted proxies do not include the peer", async () => {
    const { client, localPort } = await clientFor({ app: "10.0.0.0/8" }, { "X-Forwarded-For": "203.0.113.7" });
    expect(client).to.deep.equal(["127.0.0.1", localPort]);
  });

  it("lets a source's trustProxy override the app's", async () => {
    const off = await clientFor({ app: "loopback", source: false }, { "X-Forwarded-For": "203.0.113.7" });
    expect(off.client).to.deep.equal(["127.0.0.1", off.localPort]);
    const on = await clientFor({ source: ["127.0.0.1"] }, { "X-Forwarded-For": "203.0.113.8" });
    expect(on.client).to.deep.equal(["203.0.113.8", 0]);
  });

  it("falls back to the peer when a trusted proxy sends no forwarding header", async () => {
    const { client, localPort } = await clientFor({ app: "loopback" }, {});
    expect(client).to.deep.equal(["127.0.0.1", localPort]);
  });
});
