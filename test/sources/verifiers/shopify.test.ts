import { ShopifySignature } from "../../../src/sources/webhook/verifiers";
import { authRequest, expectAccepted, expectRefused, NON_ASCII_BODY, reference } from "./helpers";

const SECRET = "shpss_0123456789abcdef0123456789abcdef";
const BODY = JSON.stringify({ id: 820982911946154500, email: "jon@example.com", total_price: "199.00", note: "Lieferung an Hintertür" });

function request(body: string, signature?: string) {
  const headers: Record<string, string> = { "content-type": "application/json", "x-shopify-topic": "orders/create" };
  if (signature !== undefined) headers["x-shopify-hmac-sha256"] = signature;
  return authRequest({ headers, body });
}

describe("ShopifySignature (X-Shopify-Hmac-Sha256)", () => {
  it("accepts the base64 HMAC-SHA256 of the raw body", () => {
    expectAccepted(new ShopifySignature(SECRET), request(BODY, reference.shopify(SECRET, BODY)));
    expectAccepted(new ShopifySignature(SECRET), request(NON_ASCII_BODY, reference.shopify(SECRET, NON_ASCII_BODY)));
  });

  it("refuses a tampered body and another secret; accepts a rotated secret", () => {
    expectRefused(new ShopifySignature(SECRET), request(BODY.replace("199", "1"), reference.shopify(SECRET, BODY)), "signature_mismatch");
    expectRefused(new ShopifySignature(SECRET), request(BODY, reference.shopify("other", BODY)), "signature_mismatch");
    expectAccepted(new ShopifySignature(["shpss_new", SECRET]), request(BODY, reference.shopify(SECRET, BODY)));
  });

  it("refuses a missing header and garbage (hex instead of base64, truncated, unpadded)", () => {
    expectRefused(new ShopifySignature(SECRET), request(BODY), "signature_missing");
    const good = reference.shopify(SECRET, BODY);
    const hex = Buffer.from(good, "base64").toString("hex");
    for (const garbage of ["garbage", hex, good.slice(0, -4), good.replace(/=$/, ""), "sha256=" + good, good.replace(/[+/]/g, "-")]) {
      expectRefused(new ShopifySignature(SECRET), request(BODY, garbage), "signature_malformed");
    }
  });
});
