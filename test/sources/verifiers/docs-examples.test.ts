import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { expect } from "chai";
import { parse } from "yaml";
import { createVerifier, type VerifierConfig } from "../../../src/sources/webhook/verifiers";

const DOC = resolve(__dirname, "../../../../docs/senders.md");
/** Every ${VAR} becomes a value valid for every scheme (base64, so whsec_-style secrets decode). */
const ENV_VALUE = Buffer.from("example-secret-value").toString("base64");

function authBlocks(markdown: string): Record<string, unknown>[] {
  const blocks: Record<string, unknown>[] = [];
  // "```yaml" or "```yaml fragment" (see test/docs.test.ts for the marks).
  for (const match of markdown.matchAll(/```yaml(?:[ \t][^\n]*)?\n([\s\S]*?)```/g)) {
    const doc = parse(match[1].replace(/\$\{[A-Z0-9_]+\}/g, ENV_VALUE)) as Record<string, unknown>;
    if (doc.auth !== undefined) blocks.push(doc.auth as Record<string, unknown>);
    for (const resource of Object.values((doc.resources ?? {}) as Record<string, { auth?: Record<string, unknown> }>)) {
      if (resource.auth !== undefined) blocks.push(resource.auth);
    }
  }
  return blocks;
}

describe("docs/senders.md", () => {
  it("every YAML auth example builds the verifier it names", () => {
    const blocks = authBlocks(readFileSync(DOC, "utf8"));
    expect(blocks.length).to.be.at.least(10);
    const types = new Set<string>();
    for (const block of blocks) {
      const verifier = createVerifier(block as unknown as VerifierConfig);
      const type = String(block.type);
      types.add(type);
      expect(verifier.scheme).to.equal(type === "svix" ? "standard-webhooks" : type);
    }
    expect([...types].sort()).to.deep.equal(["github", "hmac", "meta", "shopify", "slack", "standard-webhooks", "stripe", "twilio", "zoom"]);
  });
});
