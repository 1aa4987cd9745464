import { expect } from "chai";
import { AUTH_KINDS, loadApp, loadConfig } from "../../src/config/index";
import { silentLogger } from "../../src/index";
import { CJS_HANDLERS, configIssues, issueAt, useTempDir, worker } from "./yaml-helpers";

describe("YAML loading: auth blocks", () => {
  const tmp = useTempDir();
  const task = `  - {name: t, source: hook, handler: {ref: "${CJS_HANDLERS}:receive"}}`;

  it("knows bearer and every signature verifier type", () => {
    expect(Object.keys(AUTH_KINDS)).to.include.members(["bearer", "github", "stripe", "slack", "standard-webhooks", "shopify", "twilio", "meta", "zoom", "hmac"]);
  });

  it("builds BearerAuth from {type: bearer, token} and a verifier from {type, secret, ...options}", async () => {
    const file = tmp.write(
      "auth.yaml",
      worker(
        "  hook: {type: webhook, path: /x, auth: {type: bearer, token: [old, new]}}\n  gh: {type: webhook, path: /gh, auth: {type: github, secret: s3cret}}\n  st: {type: webhook, path: /st, auth: {type: stripe, secret: whsec_abc, toleranceSeconds: 60}}",
        `${task}\n  - {name: g, source: gh, handler: {ref: "${CJS_HANDLERS}:receive"}}\n  - {name: s, source: st, handler: {ref: "${CJS_HANDLERS}:receive"}}`,
      ),
    );
    const app = await loadApp(file, { logger: silentLogger });
    const schemes = app.tasks.map((t) => (t.source as unknown as { options: { auth?: { scheme: string } } }).options.auth?.scheme);
    expect(schemes).to.deep.equal(["bearer", "github", "stripe"]);
  });

  it("refuses an unknown type, a missing credential, a stray key on bearer, and an option a verifier does not take", async () => {
    const file = tmp.write(
      "bad-auth.yaml",
      worker(
        [
          "  a: {type: webhook, path: /a, auth: {type: basic, token: x}}",
          "  b: {type: webhook, path: /b, auth: {type: bearer}}",
          "  c: {type: webhook, path: /c, auth: {type: bearer, token: x, realm: y}}",
          "  d: {type: webhook, path: /d, auth: {type: github, secret: x, tolerance: 5}}",
          "  e: {type: webhook, path: /e, auth: {type: github, secret: ' padded '}}",
          "  f: {type: webhook, path: /f, auth: bearer}",
        ].join("\n"),
        ["a", "b", "c", "d", "e", "f"].map((n) => `  - {name: ${n}, source: ${n}, handler: {ref: "${CJS_HANDLERS}:receive"}}`).join("\n"),
      ),
    );
    const issues = await configIssues(loadConfig(file));
    expect(issueAt(issues, "resources.a.auth.type").message).to.match(/^must be one of: bearer, github/);
    expect(issueAt(issues, "resources.b.auth.token").message).to.match(/is required/);
    expect(issueAt(issues, "resources.c.auth.realm").message).to.match(/unknown key/);
    expect(issueAt(issues, "resources.d.auth").message).to.match(/unknown option "tolerance"/);
    expect(issueAt(issues, "resources.e.auth").message).to.match(/whitespace/);
    expect(issueAt(issues, "resources.f.auth").message).to.equal("must be a mapping");
    expect(issues.map((i) => i.message).join(" ")).not.to.contain("padded");
  });
});
