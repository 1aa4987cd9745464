import { expect } from "chai";
import { createHmac } from "node:crypto";
import { bootstrap, type CoreApp } from "../../src/index";
import { recordingLogger, until, type LogLine } from "../helpers/wait";

describe("samples (the main sample app, in process)", () => {
  let app: CoreApp;
  let base: string;
  const logs: LogLine[] = [];

  before(async () => {
    process.env.PORT = "0"; // every sample source shares one server on a free port
    // Loaded only now, so that the sample sources read PORT=0.
    const { AppModule } = require("../../samples/app.module") as typeof import("../../samples/app.module");
    const { githubHook } = require("../../samples/sources") as typeof import("../../samples/sources");
    app = await bootstrap(AppModule, { store: "memory", logger: recordingLogger(logs) });
    base = `http://127.0.0.1:${githubHook.port}`;
  });
  after(async () => {
    delete process.env.PORT;
    await app?.stop();
  });

  it("GitHub push: summarised, emitted to the pushes queue, counted by the second task", async () => {
    const push = { ref: "refs/heads/main", repository: { full_name: "octo/repo" }, commits: [{}, {}] };
    const res = await fetch(`${base}/hooks/github`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-github-event": "push", "x-github-delivery": "d-1" },
      body: JSON.stringify(push),
    });
    expect(res.status).to.equal(202);
    await until(() => logs.some((l) => l.msg === "push recorded"));
    const line = logs.find((l) => l.msg === "push recorded")!;
    expect(line.fields).to.include({ repository: "octo/repo", branch: "main", commits: 2, total: 1 });
  });

  it("Slack slash command: form body in, the task's reply out", async () => {
    const res = await fetch(`${base}/hooks/slack/command`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "command=%2Fecho&text=hello+there&user_name=ann",
    });
    expect(res.status).to.equal(200);
    expect(await res.json()).to.deep.equal({ response_type: "ephemeral", text: "ann said /echo hello there" });
    const bad = await fetch(`${base}/hooks/slack/command`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "text=x" });
    expect(bad.status).to.equal(400);
    expect(await bad.json()).to.deep.include({ error: "missing_command" });
  });

  it("orders: bearer token required, custom response, a repeated x-event-id processed once", async () => {
    const send = (token?: string) =>
      fetch(`${base}/hooks/orders`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-event-id": "evt-42", ...(token ? { authorization: `Bearer ${token}` } : {}) },
        body: '{"id":"o-1","total":12}',
      });
    expect((await send()).status).to.equal(401);
    const first = await send("dev-orders-token");
    expect(first.status).to.equal(200);
    expect(first.headers.get("x-served-by")).to.equal("samples");
    expect(await first.json()).to.deep.equal({ ok: true });
    await until(() => logs.some((l) => l.msg === "order processed"));
    expect((await send("dev-orders-token")).status).to.equal(200);
    await until(() => logs.some((l) => l.msg === "duplicate delivery dropped"));
    expect(logs.filter((l) => l.msg === "order processed")).to.have.length(1);
  });

  it("orders: two copies of one x-event-id arriving at the same moment are processed once", async () => {
    const send = () =>
      fetch(`${base}/hooks/orders`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-event-id": "evt-same-time", authorization: "Bearer dev-orders-token" },
        body: '{"id":"o-2"}',
      });
    const answers = await Promise.all([send(), send(), send()]);
    expect(answers.map((a) => a.status)).to.deep.equal([200, 200, 200]);
    // The sender's id as the handler logs it; ctx.logger adds the run's own eventId.
    const mine = () => logs.filter((l) => l.fields?.deliveryId === "evt-same-time");
    await until(() => mine().length === 3);
    expect(mine().filter((l) => l.msg === "order processed")).to.have.length(1);
    expect(mine().filter((l) => l.msg === "duplicate delivery dropped")).to.have.length(2);
  });

  it("signed deliveries: a valid HMAC of the raw body is accepted, a wrong one answered 401", async () => {
    const body = '{"amount": 10, "note": "caf\u00e9"}';
    const good = createHmac("sha256", "dev-signing-secret").update(body).digest("hex");
    const ok = await fetch(`${base}/hooks/signed`, { method: "POST", headers: { "content-type": "application/json", "x-signature": good }, body });
    expect(ok.status).to.equal(202);
    const bad = await fetch(`${base}/hooks/signed`, { method: "POST", headers: { "content-type": "application/json", "x-signature": good.replace(/^./, "0") === good ? good.replace(/^./, "1") : good.replace(/^./, "0") }, body });
    expect(bad.status).to.equal(401);
    expect(await bad.json()).to.deep.include({ error: "signature_mismatch" });
  });
});
