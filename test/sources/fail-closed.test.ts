import { expect } from "chai";
import { CoreApp, silentLogger, WebhookSource, type AuthFailure, type WebhookAuth } from "../../src/index";

describe("custom auth fails closed", () => {
  let app: CoreApp;
  afterEach(async () => app?.stop());

  // Verdicts a buggy custom verifier might return: only `true` may let a request in.
  const verdicts: Array<[string, () => unknown]> = [
    ["nothing (a forgotten return)", () => undefined],
    ["null", () => null],
    ["false", () => false],
    ["a truthy string", () => "ok"],
    ["an object that is not a failure", () => ({ ok: true })],
    ["a thrown error", () => { throw new Error("bug"); }],
  ];
  for (const [name, verdict] of verdicts) {
    it(`refuses with 401 when verify returns ${name}`, async () => {
      const auth: WebhookAuth = { scheme: "custom", needsBody: true, verify: verdict as () => true | AuthFailure };
      const source = new WebhookSource({ path: "/c", port: 0, auth });
      let events = 0;
      app = new CoreApp("fail-closed", { store: "memory", logger: silentLogger }).task({ source, name: "t" }, async () => void events++);
      await app.start();
      const res = await fetch(source.url, { method: "POST", body: "x" });
      expect(res.status).to.equal(401);
      expect(((await res.json()) as { error: string }).error).to.equal("verification_error");
      await new Promise((r) => setTimeout(r, 20));
      expect(events).to.equal(0);
    });
  }

  it("passes when verify returns true, and answers a custom failure as given", async () => {
    let allow = true;
    const auth: WebhookAuth = {
      scheme: "custom",
      needsBody: false,
      verify: () => (allow ? true : { status: 403, code: "forbidden_partner", message: "not allowed" }),
    };
    const source = new WebhookSource({ path: "/c", port: 0, auth });
    app = new CoreApp("fail-closed-ok", { store: "memory", logger: silentLogger }).task({ source, name: "t" }, async () => undefined);
    await app.start();
    expect((await fetch(source.url, { method: "POST", body: "x" })).status).to.equal(202);
    allow = false;
    const refused = await fetch(source.url, { method: "POST", body: "x" });
    expect(refused.status).to.equal(403);
    expect(((await refused.json()) as { error: string }).error).to.equal("forbidden_partner");
  });
});
