import { createServer as createHttpServer, type IncomingHttpHeaders } from "node:http";
import { createServer } from "node:net";
import { gzipSync } from "node:zlib";
import { join } from "node:path";
import { expect } from "chai";
import { CoreApp, GitHubSignature, silentLogger, TwilioSignature, WebhookSource, type WebhookEvent } from "../../src/index";
import { useTempDir } from "../config/yaml-helpers";
import { until } from "../helpers/wait";
import { runCli } from "./cli-process";

describe("CLI: send", () => {
  const tmp = useTempDir();
  let app: CoreApp;
  let github: WebhookSource;
  let twilio: WebhookSource;
  const received: WebhookEvent[] = [];

  before(async () => {
    github = new WebhookSource({ path: "/hooks/github", port: 0, auth: new GitHubSignature("gh-secret") });
    twilio = new WebhookSource({ path: "/hooks/sms", port: 0, auth: new TwilioSignature("tw-token"), parser: "form" });
    app = new CoreApp("cli-send", { store: "memory", logger: silentLogger });
    app.task({ source: github }, async (ctx, event: WebhookEvent) => void received.push(event));
    app.task({ source: twilio }, async (ctx, event: WebhookEvent) => void received.push(event));
    await app.start();
  });
  after(() => app.stop());

  it("signs a payload file with the preset's scheme; the app accepts it and the task gets the exact body", async () => {
    const payload = tmp.write("push.json", JSON.stringify({ ref: "refs/heads/main", note: "héllo ✓" }));
    const result = await runCli(["send", github.url, "--preset", "github", "--secret-env", "GH_SECRET", "--file", payload, "--header", "X-GitHub-Event: push"], { GH_SECRET: "gh-secret" });
    expect(result.code, result.stderr).to.equal(0);
    expect(result.stdout).to.match(/^HTTP 202 Accepted\n/);
    expect(result.stdout).to.match(/content-type: application\/json/);
    expect(result.stdout).to.match(/\{"accepted":true,"id":"[^"]+"\}/);
    await until(() => received.length === 1);
    expect(received[0].body).to.deep.equal({ ref: "refs/heads/main", note: "héllo ✓" });
    expect(received[0].headers["x-github-event"]).to.equal("push");
  });

  it("a form for Twilio, signed over the URL and its parameters", async () => {
    const before = received.length;
    const result = await runCli(["send", twilio.url, "--preset", "twilio", "--secret-env", "TW", "--data", "From=%2B1555&Body=hi"], { TW: "tw-token" });
    expect(result.code, result.stdout + result.stderr).to.equal(0);
    await until(() => received.length === before + 1);
    expect(received[before].body).to.deep.equal({ From: "+1555", Body: "hi" });
  });

  it("a refused delivery prints the answer and exits 1", async () => {
    const result = await runCli(["send", github.url, "--preset", "github", "--secret-env", "GH_SECRET", "--data", "{}"], { GH_SECRET: "wrong" });
    expect(result.code).to.equal(1);
    expect(result.stdout).to.match(/^HTTP 401 Unauthorized\n/);
    expect(result.stdout).to.contain('"error":"signature_mismatch"');
  });

  it("refuses an unknown preset with a suggestion, hmac, and a preset without --secret-env (exit 2)", async () => {
    const typo = await runCli(["send", github.url, "--preset", "githb", "--secret-env", "X", "--data", "{}"]);
    expect(typo.code).to.equal(2);
    expect(typo.stderr).to.contain('error: send: unknown preset "githb" (did you mean "github"?)');
    const hmac = await runCli(["send", github.url, "--preset", "hmac", "--secret-env", "X", "--data", "{}"]);
    expect([hmac.code, hmac.stderr]).to.satisfy(([code, err]: [number, string]) => code === 2 && err.includes("the hmac preset needs its options"));
    const noSecret = await runCli(["send", github.url, "--preset", "github", "--data", "{}"]);
    expect(noSecret.code).to.equal(2);
    expect(noSecret.stderr).to.contain("--preset github needs --secret-env <VAR>");
    const badUrl = await runCli(["send", "localhost:8080/x", "--data", "{}"]);
    expect(badUrl.code).to.equal(2);
    const badHeader = await runCli(["send", github.url, "--header", "no-colon"]);
    expect(badHeader.stderr).to.contain('--header "no-colon" is not name:value');
  });

  it("refuses a missing environment variable, an unreadable file and an unreachable URL (exit 1), sending nothing", async () => {
    const before = received.length;
    const missing = await runCli(["send", github.url, "--preset", "github", "--secret-env", "NOT_SET_ANYWHERE", "--data", "{}"], { NOT_SET_ANYWHERE: undefined });
    expect(missing.code).to.equal(1);
    expect(missing.stderr).to.contain("error: send: the environment variable NOT_SET_ANYWHERE is not set (it should hold the github secret)");
    const noFile = await runCli(["send", github.url, "--file", join(tmp.dir(), "nope.json")]);
    expect(noFile.code).to.equal(1);
    expect(noFile.stderr).to.match(/error: send: cannot read .*nope\.json: no such file/);
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as { port: number }).port;
    await new Promise((resolve) => server.close(resolve));
    const down = await runCli(["send", `http://127.0.0.1:${port}/hooks/github`, "--data", "{}"]);
    expect(down.code).to.equal(1);
    expect(down.stderr).to.contain(`error: send: cannot reach http://127.0.0.1:${port}/hooks/github: ECONNREFUSED (is the app running?)`);
    expect(received.length).to.equal(before);
  });

  it("reaches an app on a port fetch() blocks (10080): the request is sent and answered", async function () {
    // Browsers' and fetch()'s "bad ports": an app may listen there all the same.
    const server = createHttpServer((req, res) => {
      let body = "";
      req.on("data", (c: Buffer) => (body += c.toString()));
      req.on("end", () => res.writeHead(202, { "content-type": "application/json" }).end(JSON.stringify({ got: body, method: req.method })));
    });
    const bound = await new Promise<boolean>((resolve) => {
      server.once("error", () => resolve(false));
      server.listen(10080, "127.0.0.1", () => resolve(true));
    });
    if (!bound) {
      console.log("    (skipped: port 10080 is taken on this machine)");
      this.skip();
    }
    try {
      const result = await runCli(["send", "http://127.0.0.1:10080/hooks/github", "--data", '{"a":1}']);
      expect(result.code, result.stderr).to.equal(0);
      expect(result.stdout).to.match(/^HTTP 202 Accepted\n/);
      expect(result.stdout).to.contain('{"got":"{\\"a\\":1}","method":"POST"}');
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("sends the headers it always sent and prints the answer as before: redirects not followed, set-cookie one a line, a gzip body decoded", async () => {
    let seen: IncomingHttpHeaders = {};
    const server = createHttpServer((req, res) => {
      seen = req.headers;
      req.resume();
      res.setHeader("set-cookie", ["a=1", "b=2"]);
      res.setHeader("x-two", ["p", "q"]);
      res.writeHead(302, "Found Elsewhere", { location: "/elsewhere", "content-encoding": "gzip" }).end(gzipSync("moved ✓"));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as { port: number }).port;
    try {
      const result = await runCli(["send", `http://127.0.0.1:${port}/hooks/x`, "--data", "a=1", "--header", "X-Extra: yes", "--method", "put"]);
      expect(result.code).to.equal(1);
      const lines = result.stdout.split("\n");
      expect(lines[0]).to.equal("HTTP 302 Found Elsewhere");
      expect(lines).to.include.members(["location: /elsewhere", "set-cookie: a=1", "set-cookie: b=2", "x-two: p, q", "moved ✓"]);
      const names = lines.slice(1, lines.indexOf("")).map((l) => l.slice(0, l.indexOf(":")));
      expect(names).to.deep.equal([...names].sort());
      expect(seen).to.include({ "content-type": "application/x-www-form-urlencoded", "content-length": "3", "x-extra": "yes", accept: "*/*", "user-agent": "node", "accept-encoding": "gzip, deflate" });
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("prints an answer that leaves HTTP (101 upgrade, CONNECT) instead of ending silently with code 0", async () => {
    // node gives these answers to the "upgrade" / "connect" events, never to "response".
    const server = createServer((socket) =>
      socket.once("data", (request: Buffer) => {
        if (request.toString().startsWith("CONNECT ")) socket.write("HTTP/1.1 200 Connection established\r\n\r\n");
        else socket.write("HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\nconnection: upgrade\r\n\r\n");
      }),
    );
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as { port: number }).port;
    try {
      const upgraded = await runCli(["send", `http://127.0.0.1:${port}/ws`, "--method", "GET", "--header", "upgrade: websocket", "--header", "connection: upgrade"]);
      expect(upgraded.code, upgraded.stderr).to.equal(1);
      expect(upgraded.stdout).to.match(/^HTTP 101 Switching Protocols\n/);
      expect(upgraded.stdout).to.contain("upgrade: websocket");
      const tunnel = await runCli(["send", `http://127.0.0.1:${port}/x`, "--method", "CONNECT"]);
      expect(tunnel.code, tunnel.stderr).to.equal(0);
      expect(tunnel.stdout).to.match(/^HTTP 200 Connection established\n/);
    } finally {
      server.close();
    }
  });

  it("refuses a body on GET or HEAD, and a method that is not a token (exit 2), sending nothing", async () => {
    const before = received.length;
    const get = await runCli(["send", github.url, "--method", "get", "--data", "{}"]);
    expect(get.code).to.equal(2);
    expect(get.stderr).to.contain("error: send: a GET request carries no body; drop --file/--data or give another --method");
    const bad = await runCli(["send", github.url, "--method", "PO ST", "--data", "{}"]);
    expect(bad.code, bad.stderr).to.equal(2);
    expect(bad.stderr).to.match(/error: send: .*method/i);
    expect(received.length).to.equal(before);
  });

  // curl's habit, `-d @push.json`: the text "@push.json" was signed, accepted with 202, and failed in the task.
  it("--data @file is refused, pointing to --file (exit 2), sending nothing", async () => {
    const before = received.length;
    const result = await runCli(["send", github.url, "--preset", "github", "--secret-env", "GH_SECRET", "--data", "@push.json"], { GH_SECRET: "gh-secret" });
    expect(result.code, result.stdout).to.equal(2);
    expect(result.stderr).to.contain('error: send: --data "@push.json" is sent as it is written, not read from a file: give --file push.json');
    expect(received.length).to.equal(before);
  });

  it("a URL without its scheme is refused with the http:// URL it looks like", async () => {
    const result = await runCli(["send", "localhost:8080/hooks/github", "--data", "{}"]);
    expect(result.code).to.equal(2);
    expect(result.stderr).to.contain('the URL must be http:// or https://, got "localhost:8080/hooks/github" (did you mean http://localhost:8080/hooks/github?)');
  });

  it("suggests the closest command for a misspelt one", async () => {
    const result = await runCli(["sned"]);
    expect(result.code).to.equal(2);
    expect(result.stderr).to.contain('unknown command "sned" (did you mean "send"?)');
  });
});
