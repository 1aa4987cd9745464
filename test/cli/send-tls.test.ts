import { spawnSync } from "node:child_process";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import { createServer as createHttpServer, type Server } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import { join } from "node:path";
import { expect } from "chai";
import { useTempDir } from "../config/yaml-helpers";
import { runCli } from "./cli-process";

async function listening(server: Server): Promise<number> {
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return (server.address() as { port: number }).port;
}

/**
 * `send` to an https URL where something did answer ended with "(is the app running?)": the
 * app was running, behind a certificate node does not trust, or without TLS at all.
 */
describe("CLI: send to an https URL that answers but cannot be used", () => {
  const tmp = useTempDir();
  const servers: Server[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
  });

  it("a self-signed certificate: says so, and how to trust it", async function () {
    const dir = tmp.dir();
    const made = spawnSync("openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", join(dir, "k.pem"), "-out", join(dir, "c.pem"), "-days", "1", "-subj", "/CN=localhost"]);
    if (made.error !== undefined || made.status !== 0) this.skip(); // no openssl here
    const server = createHttpsServer({ key: readFileSync(join(dir, "k.pem")), cert: readFileSync(join(dir, "c.pem")) }, (_req, res) => res.end("ok"));
    servers.push(server);
    const port = await listening(server);
    const result = await runCli(["send", `https://127.0.0.1:${port}/hooks/x`, "--data", "{}"], { NODE_TLS_REJECT_UNAUTHORIZED: undefined, NODE_EXTRA_CA_CERTS: undefined });
    expect(result.code).to.equal(1);
    expect(result.stderr).to.match(/cannot reach https:\/\/127\.0\.0\.1:\d+\/hooks\/x: DEPTH_ZERO_SELF_SIGNED_CERT \(something answered, but its TLS certificate is not trusted: NODE_EXTRA_CA_CERTS=/);
    expect(result.stderr).to.not.contain("is the app running?");
  });

  it("https:// to an app that speaks plain http: names the http:// URL", async () => {
    const server = createHttpServer((_req, res) => res.end("ok"));
    servers.push(server);
    const port = await listening(server);
    const result = await runCli(["send", `https://127.0.0.1:${port}/hooks/x?a=1`, "--data", "{}"]);
    expect(result.code).to.equal(1);
    expect(result.stderr).to.contain(`(something answered, but not over TLS: is it http://127.0.0.1:${port}/hooks/x?a=1?)`);
  });
});
