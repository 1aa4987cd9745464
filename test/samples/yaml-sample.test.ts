import { expect } from "chai";
import { createHmac } from "node:crypto";
import { resolve } from "node:path";
import { ConfigError, loadApp, type CoreApp, type WebhookSource } from "../../src/index";
import { recordingLogger, until, type LogLine } from "../helpers/wait";

const WORKER = resolve(__dirname, "../../../samples/worker.yaml");

describe("samples/worker.yaml (the sample app declared in YAML)", () => {
  let app: CoreApp;
  let base: string;
  const logs: LogLine[] = [];
  const logger = recordingLogger(logs);

  before(async () => {
    app = await loadApp(WORKER, { store: "memory", logger }, { env: { PORT: "0", ORDERS_TOKEN: "dev-orders-token", SIGNING_SECRET: "dev-signing-secret" } });
    await app.start();
    const source = app.tasks.find((t) => t.name === "summarise-push")!.source as WebhookSource;
    base = `http://127.0.0.1:${source.port}`;
  });
  after(async () => app?.stop());

  it("declares the same endpoints as the code sample, on one port", () => {
    expect(app.tasks.map((t) => t.name)).to.deep.equal(["summarise-push", "record-push", "slash-command", "receive-order", "verified-delivery"]);
  });

  it("GitHub push goes through the queue to the second task; a redelivery is a duplicate", async () => {
    const send = () =>
      fetch(`${base}/hooks/github`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-github-event": "push", "x-github-delivery": "delivery-1" },
        body: JSON.stringify({ ref: "refs/heads/main", repository: { full_name: "octo/yaml" }, commits: [{}] }),
      });
    expect((await send()).status).to.equal(202);
    const again = await send();
    expect(again.status).to.equal(200);
    expect(await again.json()).to.deep.include({ duplicate: true });
    await until(() => logs.some((l) => l.msg === "push recorded"));
    expect(logs.find((l) => l.msg === "push recorded")!.fields).to.include({ repository: "octo/yaml", branch: "main", total: 1 });
  });

  it("the slash command answers with the task's result", async () => {
    const res = await fetch(`${base}/hooks/slack/command`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "command=%2Fecho&text=hi&user_name=bo",
    });
    expect(res.status).to.equal(200);
    expect(await res.json()).to.deep.equal({ response_type: "ephemeral", text: "bo said /echo hi" });
  });

  it("orders need the bearer token, get the custom response, and an x-event-id is processed once", async () => {
    const send = (token?: string) =>
      fetch(`${base}/hooks/orders`, {
        method: "PUT",
        headers: { "content-type": "application/json", "x-event-id": "e-9", ...(token ? { authorization: `Bearer ${token}` } : {}) },
        body: '{"id":"o-9"}',
      });
    expect((await send("wrong")).status).to.equal(401);
    const ok = await send("dev-orders-token");
    expect(ok.status).to.equal(200);
    expect(ok.headers.get("x-served-by")).to.equal("samples");
    expect(await ok.json()).to.deep.equal({ ok: true });
    expect(await (await send("dev-orders-token")).json()).to.deep.include({ duplicate: true });
    await until(() => logs.some((l) => l.msg === "order processed"));
    await new Promise((r) => setTimeout(r, 30));
    expect(logs.filter((l) => l.msg === "order processed")).to.have.length(1);
  });

  it("signed deliveries are checked by the source: a wrong x-signature is 401 and makes no event", async () => {
    const body = '{"amount":1}';
    const signature = createHmac("sha256", "dev-signing-secret").update(body).digest("hex");
    const bad = await fetch(`${base}/hooks/signed`, { method: "POST", headers: { "x-signature": "00" + signature.slice(2) }, body });
    expect(bad.status).to.equal(401);
    const good = await fetch(`${base}/hooks/signed`, { method: "POST", headers: { "x-signature": signature }, body });
    expect(good.status).to.equal(202);
    await until(() => logs.some((l) => l.msg === "signed delivery verified"));
    expect(logs.filter((l) => l.msg === "signed delivery verified")).to.have.length(1);
  });

  it("has no default for its secrets: unset, it refuses to load and names each variable", async () => {
    const error = await loadApp(WORKER, { store: "memory", logger }, { env: { PORT: "0" } }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).to.be.instanceOf(ConfigError);
    const messages = (error as ConfigError).issues.map((i) => `${i.path}: ${i.message}`);
    expect(messages).to.include.members([
      "resources.orders.auth.token: environment variable ORDERS_TOKEN is not set (set it, or give a default: ${ORDERS_TOKEN:-default})",
      "resources.signed.auth.secret: environment variable SIGNING_SECRET is not set (set it, or give a default: ${SIGNING_SECRET:-default})",
    ]);
  });
});
