import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { Agent, request } from "node:https";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import twilio from "twilio";
import { CoreApp, silentLogger, TwilioSignature, WebhookSource, type WebhookEvent } from "../../src/index";
import { Collector, sleep } from "../helpers/app";
import { freePort } from "../helpers/http-client";

/**
 * The recommended deployment, for real: nginx terminating TLS in front of the app, with the
 * configuration shipped in samples/deploy/nginx.conf (only its ports and file paths replaced).
 */
const SAMPLE = join(__dirname, "..", "..", "..", "samples", "deploy", "nginx.conf");
const TOKEN = "twilio-auth-token";

function findTool(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? "").split(":").concat(["/usr/sbin", "/usr/local/sbin", "/sbin"])) {
    const candidate = join(dir, name);
    if (dir !== "" && existsSync(candidate)) return candidate;
  }
  return undefined;
}

/** Replaces `from` in the sample, insisting that it is there: a sample that changed shape fails here. */
function replaceExactly(text: string, from: string, to: string): string {
  if (!text.includes(from)) throw new Error(`samples/deploy/nginx.conf no longer contains ${JSON.stringify(from)}: update this test with it`);
  return text.split(from).join(to);
}

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  reusedSocket: boolean;
}

describe("Deployment behind nginx (TLS, /hooks/ prefix), with samples/deploy/nginx.conf", function () {
  this.timeout(30_000);
  let dir: string;
  let nginx: ChildProcess | undefined;
  let nginxLog = "";
  let httpsPort: number;
  let ca: Buffer;
  let app: CoreApp;
  let trusted: WebhookSource;
  let untrusted: WebhookSource;
  let signed: WebhookSource;
  let small: WebhookSource;
  const events = { trusted: new Collector<WebhookEvent>(), untrusted: new Collector<WebhookEvent>(), signed: new Collector<WebhookEvent>(), small: new Collector<WebhookEvent>() };

  before(async function () {
    const nginxBin = findTool("nginx");
    const openssl = findTool("openssl");
    if (nginxBin === undefined || openssl === undefined) {
      console.log(`      skipped: ${nginxBin === undefined ? "nginx" : "openssl"} is not installed (Debian: apt-get install nginx-light openssl)`);
      this.skip();
    }
    dir = mkdtempSync(join(tmpdir(), "wt-nginx-"));
    execFileSync(
      openssl!,
      ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1", "-keyout", join(dir, "key.pem"), "-out", join(dir, "cert.pem")],
      { stdio: "ignore" },
    );
    ca = readFileSync(join(dir, "cert.pem"));

    // One app listener (the sample's upstream 127.0.0.1:8080), four sources under /hooks/.
    app = new CoreApp("nginx-e2e", { store: "memory", logger: silentLogger });
    const appPort = await freePort();
    const source = (path: string, extra: Partial<ConstructorParameters<typeof WebhookSource>[0]> = {}) => new WebhookSource({ path, host: "127.0.0.1", port: appPort, ...extra });
    trusted = source("/hooks/trusted", { trustProxy: "127.0.0.1" });
    untrusted = source("/hooks/untrusted");
    signed = source("/hooks/twilio/sms", { trustProxy: "127.0.0.1", auth: new TwilioSignature(TOKEN), parser: "form" });
    small = source("/hooks/small", { maxBodyBytes: 64 * 1024, parser: "raw" });
    app.task({ source: trusted, name: "trusted" }, events.trusted.handler);
    app.task({ source: untrusted, name: "untrusted" }, events.untrusted.handler);
    app.task({ source: signed, name: "signed" }, events.signed.handler);
    app.task({ source: small, name: "small" }, events.small.handler);
    await app.start();

    httpsPort = await freePort();
    let site = readFileSync(SAMPLE, "utf8");
    site = replaceExactly(site, "server 127.0.0.1:8080;", `server 127.0.0.1:${appPort};`);
    site = replaceExactly(site, "listen 443 ssl;", `listen 127.0.0.1:${httpsPort} ssl;`);
    site = replaceExactly(site, "/etc/ssl/certs/hooks.example.com.pem", join(dir, "cert.pem"));
    site = replaceExactly(site, "/etc/ssl/private/hooks.example.com.key", join(dir, "key.pem"));
    writeFileSync(join(dir, "site.conf"), site);
    // The main configuration a Debian install provides around conf.d/, with every path in `dir`.
    writeFileSync(
      join(dir, "nginx.conf"),
      [
        "worker_processes 1;",
        `pid ${join(dir, "nginx.pid")};`,
        `error_log ${join(dir, "error.log")} warn;`,
        "events { worker_connections 256; }",
        "http {",
        "  access_log off;",
        ...["client_body", "proxy", "fastcgi", "uwsgi", "scgi"].map((t) => `  ${t}_temp_path ${join(dir, `${t}_temp`)};`),
        `  include ${join(dir, "site.conf")};`,
        "}",
        "",
      ].join("\n"),
    );
    execFileSync("chmod", ["755", dir]); // nginx's workers run as another user when started by root
    nginx = spawn(nginxBin!, ["-p", dir, "-e", join(dir, "error.log"), "-c", join(dir, "nginx.conf"), "-g", "daemon off;"], { stdio: ["ignore", "pipe", "pipe"] });
    nginx.stdout!.on("data", (d: Buffer) => (nginxLog += d.toString()));
    nginx.stderr!.on("data", (d: Buffer) => (nginxLog += d.toString()));
    const exited = new Promise<number | null>((resolve) => nginx!.once("exit", resolve));
    const deadline = Date.now() + 10_000;
    for (;;) {
      const up = await new Promise<boolean>((resolve) => {
        const socket = connect({ port: httpsPort, host: "127.0.0.1" });
        socket.once("connect", () => (socket.destroy(), resolve(true)));
        socket.once("error", () => resolve(false));
      });
      if (up) break;
      const code = await Promise.race([exited, sleep(100).then(() => "running" as const)]);
      if (code !== "running" || Date.now() > deadline) {
        const log = existsSync(join(dir, "error.log")) ? readFileSync(join(dir, "error.log"), "utf8") : "";
        throw new Error(`nginx did not start (exit ${String(code)}): ${nginxLog}${log}`);
      }
    }
  });

  after(async () => {
    if (nginx !== undefined && nginx.exitCode === null) {
      const gone = new Promise((resolve) => nginx!.once("exit", resolve));
      nginx.kill("SIGTERM");
      await gone;
    }
    await app?.stop({ timeoutMs: 2_000 });
    if (dir !== undefined && process.env.KEEP_NGINX_DIR === undefined) rmSync(dir, { recursive: true, force: true });
    else if (dir !== undefined) console.log(dir);
  });

  /** An https request to nginx, from `localAddress` (127.0.0.2 unless said), checking its certificate. */
  function call(path: string, options: { method?: string; headers?: Record<string, string | number>; body?: string | Buffer; agent?: Agent; localAddress?: string } = {}): Promise<Reply> {
    return new Promise((resolve, reject) => {
      const req = request(
        { host: "127.0.0.1", servername: "localhost", port: httpsPort, path, method: options.method ?? "POST", headers: { host: `localhost:${httpsPort}`, ...options.headers }, ca, agent: options.agent, localAddress: options.localAddress ?? "127.0.0.2" },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks).toString("utf8"), reusedSocket: req.reusedSocket }));
        },
      );
      req.on("error", reject);
      req.end(options.body);
    });
  }

  it("event.client is the original caller when the proxy is trusted, even if the caller forges X-Forwarded-For", async () => {
    const reply = await call("/hooks/trusted", { headers: { "content-type": "application/json", "x-forwarded-for": "6.6.6.6" }, body: "{}" });
    expect(reply.status, reply.body).to.equal(202);
    const [{ event }] = await events.trusted.waitFor(1);
    expect(event.client[0]).to.equal("127.0.0.2");
    expect(event.path).to.equal("/hooks/trusted");
    expect(event.headers["x-forwarded-proto"]).to.equal("https");
    expect(event.headers["x-forwarded-host"]).to.equal(`localhost:${httpsPort}`);
  });

  it("event.client is nginx's own address when the proxy is not trusted", async () => {
    const reply = await call("/hooks/untrusted", { headers: { "content-type": "application/json" }, body: "{}" });
    expect(reply.status, reply.body).to.equal(202);
    const [{ event }] = await events.untrusted.waitFor(1);
    expect(event.client[0]).to.equal("127.0.0.1");
    expect(event.client[1]).to.be.above(0);
    expect(event.headers["x-forwarded-for"]).to.equal("127.0.0.2");
  });

  it("verifies a Twilio signature over the https URL the sender called (https://localhost:port/hooks/...)", async () => {
    const params = { AccountSid: "AC123", From: "+15005550006", Body: "Grüße 🎉" };
    const url = `https://localhost:${httpsPort}/hooks/twilio/sms?tenant=acme`;
    const signature = twilio.getExpectedTwilioSignature(TOKEN, url, params);
    const body = new URLSearchParams(params).toString();
    const headers = { "content-type": "application/x-www-form-urlencoded", "x-twilio-signature": signature };
    const reply = await call("/hooks/twilio/sms?tenant=acme", { headers, body });
    expect(reply.status, reply.body).to.equal(202);
    const [{ event }] = await events.signed.waitFor(1);
    expect(event.body).to.deep.equal(params);
    // The same signature for the plain-http URL is not what was called: refused.
    const httpSignature = twilio.getExpectedTwilioSignature(TOKEN, url.replace("https:", "http:"), params);
    const refused = await call("/hooks/twilio/sms?tenant=acme", { headers: { ...headers, "x-twilio-signature": httpSignature }, body });
    expect(refused.status).to.equal(401);
  });

  it("keeps the sender's connection alive through the proxy, and nginx's connection to the app too", async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1, ca });
    try {
      const replies: Reply[] = [];
      for (let n = 0; n < 5; n++) replies.push(await call("/hooks/untrusted", { agent, headers: { "content-type": "application/json" }, body: `{"n":${n}}` }));
      expect(replies.map((r) => r.status)).to.deep.equal([202, 202, 202, 202, 202]);
      expect(replies.map((r) => r.reusedSocket)).to.deep.equal([false, true, true, true, true]);
      const received = await events.untrusted.waitFor(6);
      const upstreamPorts = new Set(received.slice(1).map((r) => r.event.client[1]));
      expect(upstreamPorts.size, "nginx reused its upstream connection").to.equal(1);
    } finally {
      agent.destroy();
    }
  });

  it("a body over the source's limit is answered 413 by the app (its JSON), not by nginx", async () => {
    for (const headers of [{ "content-length": 200 * 1024 }, { "transfer-encoding": "chunked" }] as Array<Record<string, string | number>>) {
      const reply = await call("/hooks/small", { headers: { "content-type": "application/octet-stream", ...headers }, body: Buffer.alloc(200 * 1024, 0x61) });
      expect(reply.status, JSON.stringify(headers)).to.equal(413);
      expect(reply.headers["content-type"]).to.equal("application/json");
      expect(JSON.parse(reply.body).error).to.equal("body_too_large");
    }
    // Within the limit, accepted.
    expect((await call("/hooks/small", { headers: { "content-type": "application/octet-stream" }, body: Buffer.alloc(1000, 0x61) })).status).to.equal(202);
    expect((await events.small.waitFor(1))[0].event.body).to.have.length(1000);
  });

  it("nothing outside /hooks/ reaches the app", async () => {
    const reply = await call("/trusted", { headers: { "content-type": "application/json" }, body: "{}" });
    expect(reply.status).to.equal(404);
  });
});
