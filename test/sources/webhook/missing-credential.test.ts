import { expect } from "chai";
import {
  BearerAuth,
  GitHubSignature,
  HmacSignature,
  MetaSignature,
  ShopifySignature,
  SlackSignature,
  StandardWebhooksSignature,
  StripeSignature,
  TwilioSignature,
  verifyHmac,
  ZoomSignature,
} from "../../../src/index";

/** A variable no test environment sets, read as an app reads its secret. */
const UNSET = "WEBHOOK_TASKS_TEST_NEVER_SET";

describe("a secret or token from an unset or empty environment variable", () => {
  before(() => expect(process.env[UNSET]).to.equal(undefined));

  const makers: Record<string, (secret: string) => unknown> = {
    BearerAuth: (s) => new BearerAuth(s),
    GitHubSignature: (s) => new GitHubSignature(s),
    StripeSignature: (s) => new StripeSignature(s),
    SlackSignature: (s) => new SlackSignature(s),
    StandardWebhooksSignature: (s) => new StandardWebhooksSignature(s),
    ShopifySignature: (s) => new ShopifySignature(s),
    TwilioSignature: (s) => new TwilioSignature(s),
    MetaSignature: (s) => new MetaSignature(s),
    ZoomSignature: (s) => new ZoomSignature(s),
    HmacSignature: (s) => new HmacSignature(s, { header: "x-signature" }),
    verifyHmac: (s) => verifyHmac({ signature: "00", body: "", secret: s }),
  };

  for (const [owner, make] of Object.entries(makers)) {
    it(`${owner}: names the unset variable, and the empty one, as the likely cause`, () => {
      const what = owner === "BearerAuth" ? "the token" : "the secret";
      expect(() => make(process.env[UNSET]!)).to.throw(TypeError, `${owner}: ${what} is undefined: is the environment variable that should hold it unset?`);
      expect(() => make("")).to.throw(TypeError, `${owner}: ${what} is empty: is the environment variable that should hold it set to nothing?`);
      expect(() => make([process.env[UNSET]] as unknown as string)).to.throw(TypeError, /is undefined: is the environment variable/);
    });
  }

  it("MetaSignature: a verifyToken written out but unset is refused, not taken as no handshake", () => {
    expect(() => new MetaSignature("s3cret", { verifyToken: process.env[UNSET]! })).to.throw(TypeError, "MetaSignature: verifyToken is undefined: is the environment variable");
    expect(() => new MetaSignature("s3cret", { verifyToken: "" })).to.throw(TypeError, "MetaSignature: verifyToken is empty");
    expect(new MetaSignature("s3cret", {}).handshake).to.equal(undefined);
  });

  it("a wrong type is named as such, and an empty list as an empty list", () => {
    expect(() => new GitHubSignature(42 as unknown as string)).to.throw(TypeError, "GitHubSignature: the secret must be a non-empty string, got number");
    expect(() => new BearerAuth([])).to.throw(TypeError, "BearerAuth: the token is an empty list");
  });
});
