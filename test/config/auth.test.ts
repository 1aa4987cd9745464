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

  it("a credential from an environment variable set to nothing is told as empty, not as one to move to ${ENV_VAR}", async () => {
    const file = tmp.write(
      "empty-secret.yaml",
      worker(
        "  gh: {type: webhook, path: /gh, auth: {type: github, secret: '${GH_SECRET}'}}\n  hook: {type: webhook, path: /x, auth: {type: bearer, token: ['${OLD_TOKEN}', '${NEW_TOKEN}']}}",
        `${task}\n  - {name: g, source: gh, handler: {ref: "${CJS_HANDLERS}:receive"}}`,
      ),
    );
    const issues = await configIssues(loadConfig(file, { env: { GH_SECRET: "", OLD_TOKEN: "old", NEW_TOKEN: "" } }));
    for (const path of ["resources.gh.auth.secret", "resources.hook.auth.token"]) {
      const { message } = issueAt(issues, path);
      expect(message, path).to.match(/is empty: is the environment variable that should hold it set to nothing\?/);
      expect(message, path).not.to.contain("use ${ENV_VAR}");
    }
  });

  it("a misspelt key of every auth type, a misspelt option and a misspelt type get a did-you-mean", async () => {
    // The credential key of each type, misspelt, and one option of each type that takes options.
    const optionTypos: Record<string, [string, string]> = {
      stripe: ["toleranceSecond", "toleranceSeconds"],
      slack: ["handshak", "handshake"],
      "standard-webhooks": ["toleranceSecnds", "toleranceSeconds"],
      svix: ["tolerancSeconds", "toleranceSeconds"],
      twilio: ["publicURL", "publicUrl"],
      meta: ["verifyTokn", "verifyToken"],
      zoom: ["handshke", "handshake"],
      hmac: ["algoritm", "algorithm"],
    };
    const kinds = Object.entries(AUTH_KINDS);
    const resources = kinds.flatMap(([type, kind], i) => {
      const typo = kind.credential === "token" ? "tokne" : "secrte";
      const lines = [`  k${i}: {type: webhook, path: /k${i}, auth: {type: ${type}, ${typo}: x}}`];
      const option = optionTypos[type];
      const header = type === "hmac" ? ", header: x-sig" : "";
      if (option) lines.push(`  o${i}: {type: webhook, path: /o${i}, auth: {type: ${type}, secret: c2VjcmV0, ${option[0]}: 1${header}}}`);
      return lines;
    });
    resources.push("  t: {type: webhook, path: /t, auth: {type: githbu, secret: x}}", "  u: {type: webhook, path: /u, auth: {tpye: github, secret: x}}");
    const file = tmp.write("typos.yaml", worker(resources.join("\n"), task.replace("source: hook", "source: t")));
    const issues = await configIssues(loadConfig(file));
    kinds.forEach(([type, kind], i) => {
      const typo = kind.credential === "token" ? "tokne" : "secrte";
      expect(issueAt(issues, `resources.k${i}.auth.${typo}`).message, type).to.equal(`unknown key (did you mean "${kind.credential}"?)`);
      expect(issues.filter((issue) => issue.path.startsWith(`resources.k${i}.`)), type).to.have.length(1);
      const option = optionTypos[type];
      if (option) expect(issueAt(issues, `resources.o${i}.auth`).message, type).to.contain(`unknown option "${option[0]}" (did you mean "${option[1]}"?; known options:`);
    });
    expect(Object.keys(optionTypos).filter((type) => !Object.hasOwn(AUTH_KINDS, type))).to.deep.equal([]);
    expect(issueAt(issues, "resources.t.auth.type").message).to.match(/^must be one of: .* \(did you mean "github"\?\)$/);
    expect(issueAt(issues, "resources.u.auth.tpye").message).to.equal('unknown key (did you mean "type"?)');
  });
});
