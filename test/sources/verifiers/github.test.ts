import { expect } from "chai";
import { GitHubSignature } from "../../../src/sources/webhook/verifiers";
import { authRequest, expectAccepted, expectRefused, NON_ASCII_BODY } from "./helpers";

type Octokit = typeof import("@octokit/webhooks-methods");

const SECRET = "gh-webhook-secret-1";
const OLD_SECRET = "gh-webhook-secret-0";
const BODY = JSON.stringify({ action: "opened", number: 1, repository: { full_name: "acme/widgets" } });

function request(body: string, signature?: string, extra: Record<string, string> = {}) {
  const headers: Record<string, string> = { "content-type": "application/json", "x-github-event": "issues", ...extra };
  if (signature !== undefined) headers["x-hub-signature-256"] = signature;
  return authRequest({ headers, body });
}

describe("GitHubSignature (X-Hub-Signature-256)", () => {
  let octokit: Octokit;
  before(async () => {
    octokit = await import("@octokit/webhooks-methods");
  });

  it("accepts GitHub's published example (secret \"It's a Secret to Everybody\", body \"Hello, World!\")", () => {
    const auth = new GitHubSignature("It's a Secret to Everybody");
    expectAccepted(auth, request("Hello, World!", "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"));
    expectRefused(auth, request("Hello, World?", "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"), "signature_mismatch");
  });

  it("accepts a delivery signed by @octokit/webhooks-methods, which also verifies it", async () => {
    const signature = await octokit.sign(SECRET, BODY);
    expectAccepted(new GitHubSignature(SECRET), request(BODY, signature));
    expect(await octokit.verify(SECRET, BODY, signature)).to.equal(true);
  });

  it("verifies the raw bytes of a non-ASCII body", async () => {
    const signature = await octokit.sign(SECRET, NON_ASCII_BODY);
    expectAccepted(new GitHubSignature(SECRET), request(NON_ASCII_BODY, signature));
    // The same text re-serialised (escaped unicode) is other bytes: refused.
    const reserialised = JSON.stringify(JSON.parse(NON_ASCII_BODY)).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
    expectRefused(new GitHubSignature(SECRET), request(reserialised, signature), "signature_mismatch");
  });

  it("refuses a tampered body", async () => {
    const signature = await octokit.sign(SECRET, BODY);
    expectRefused(new GitHubSignature(SECRET), request(BODY.replace("opened", "closed"), signature), "signature_mismatch");
    expectRefused(new GitHubSignature(SECRET), request(BODY + "\n", signature), "signature_mismatch");
  });

  it("refuses a signature made with another secret", async () => {
    const signature = await octokit.sign("not-the-secret", BODY);
    expectRefused(new GitHubSignature(SECRET), request(BODY, signature), "signature_mismatch");
  });

  it("accepts the old secret while rotating, and only the listed ones", async () => {
    const auth = new GitHubSignature([SECRET, OLD_SECRET]);
    expectAccepted(auth, request(BODY, await octokit.sign(OLD_SECRET, BODY)));
    expectAccepted(auth, request(BODY, await octokit.sign(SECRET, BODY)));
    expectRefused(auth, request(BODY, await octokit.sign("gh-webhook-secret-2", BODY)), "signature_mismatch");
    expectRefused(new GitHubSignature(SECRET), request(BODY, await octokit.sign(OLD_SECRET, BODY)), "signature_mismatch");
  });

  it("refuses a missing header, and a SHA-1 X-Hub-Signature alone", async () => {
    expectRefused(new GitHubSignature(SECRET), request(BODY), "signature_missing");
    const { createHmac } = await import("node:crypto");
    const sha1 = "sha1=" + createHmac("sha1", SECRET).update(BODY).digest("hex");
    expectRefused(new GitHubSignature(SECRET), request(BODY, undefined, { "x-hub-signature": sha1 }), "signature_missing");
    expectRefused(new GitHubSignature(SECRET), request(BODY, sha1), "signature_malformed");
  });

  it("refuses garbage headers as malformed", async () => {
    const good = await octokit.sign(SECRET, BODY);
    for (const garbage of ["garbage", "sha256=", "sha256=xyz", good.slice(0, -1), good + "0", good.replace("sha256=", "SHA256="), ` ${good}`, "sha512=" + "a".repeat(128)]) {
      expectRefused(new GitHubSignature(SECRET), request(BODY, garbage), "signature_malformed");
    }
  });

  it("what it accepts, octokit's verify accepts too", async () => {
    const auth = new GitHubSignature(SECRET);
    for (const body of [BODY, NON_ASCII_BODY, "x", "{}"]) {
      const signature = await octokit.sign(SECRET, body);
      expect(auth.verify(request(body, signature))).to.equal(true);
      expect(await octokit.verify(SECRET, body, signature)).to.equal(true);
    }
  });

  it("GitHub signs no timestamp: an old delivery still verifies (deduplicate on X-GitHub-Delivery)", async () => {
    expectAccepted(new GitHubSignature(SECRET), request(BODY, await octokit.sign(SECRET, BODY), { "x-github-delivery": "72d3162e-cc78-11e3-81ab-4c9367dc0958" }));
  });

  it("names the signature headers as credentials", () => {
    expect(new GitHubSignature(SECRET).credentialHeaders).to.deep.equal(["x-hub-signature-256", "x-hub-signature"]);
    expect(new GitHubSignature(SECRET).needsBody).to.equal(true);
  });
});
