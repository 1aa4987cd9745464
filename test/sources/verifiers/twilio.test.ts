import { expect } from "chai";
import twilio from "twilio";
import { TwilioSignature } from "../../../src/sources/webhook/verifiers";
import { authRequest, expectAccepted, expectRefused, NON_ASCII_BODY } from "./helpers";

const TOKEN = "auth-token-0123456789abcdef";
const OLD_TOKEN = "auth-token-previous";
const PUBLIC = "https://hooks.example.com/twilio/sms";
const FORM_CT = "application/x-www-form-urlencoded";

type Params = Record<string, string | string[]>;

function encodeForm(params: Params): string {
  const form = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) for (const v of Array.isArray(value) ? value : [value]) form.append(name, v);
  return form.toString();
}

const SMS: Params = { AccountSid: "AC123", From: "+15005550006", To: "+15005550001", Body: "Hello there", MessageSid: "SM1", NumMedia: "0" };

/** A form POST signed by twilio's own getExpectedTwilioSignature. */
function formRequest(params: Params, options: { token?: string; signedUrl?: string; query?: string; body?: string; publicUrl?: string } = {}) {
  const query = options.query ?? "";
  const signedUrl = options.signedUrl ?? PUBLIC + query;
  const signature = twilio.getExpectedTwilioSignature(options.token ?? TOKEN, signedUrl, params as Record<string, string>);
  return authRequest({
    url: "/twilio/sms" + query,
    headers: { "content-type": FORM_CT, "x-twilio-signature": signature },
    body: options.body ?? encodeForm(params),
    publicUrl: options.publicUrl ?? PUBLIC + query,
  });
}

describe("TwilioSignature (X-Twilio-Signature)", () => {
  it("accepts Twilio's published example (token 12345, https://mycompany.com/myapp.php?foo=1&bar=2)", () => {
    const auth = new TwilioSignature("12345", { publicUrl: "https://mycompany.com/myapp.php" });
    const body = "To=%2B18005551212&CallSid=CA1234567890ABCDE&Digits=1234&From=%2B12349013030&Caller=%2B12349013030";
    const req = (digits: string) =>
      authRequest({
        url: "/myapp.php?foo=1&bar=2",
        headers: { "content-type": FORM_CT, "x-twilio-signature": "0/KCTR6DLpKmkAf8muzZqo1nDgQ=" },
        body: body.replace("1234&", `${digits}&`),
        publicUrl: () => {
          throw new Error("publicUrl() must not be consulted when the option is set");
        },
      });
    expectAccepted(auth, req("1234"));
    expectRefused(auth, req("9999"), "signature_mismatch");
  });

  it("accepts a form POST signed by twilio's getExpectedTwilioSignature, which validateRequest also accepts", () => {
    const req = formRequest(SMS);
    expectAccepted(new TwilioSignature(TOKEN), req);
    expect(twilio.validateRequest(TOKEN, req.headers["x-twilio-signature"] as string, PUBLIC, SMS)).to.equal(true);
  });

  it("signs the query string too, and takes the URL from request.publicUrl() when not configured", () => {
    expectAccepted(new TwilioSignature(TOKEN), formRequest(SMS, { query: "?tenant=acme&x=a%20b" }));
    expectAccepted(new TwilioSignature(TOKEN, { publicUrl: PUBLIC }), formRequest(SMS, { query: "?tenant=acme", publicUrl: "http://127.0.0.1:8080/twilio/sms?tenant=acme" }));
    expectRefused(new TwilioSignature(TOKEN), formRequest(SMS, { signedUrl: PUBLIC + "?tenant=acme", query: "?tenant=evil" }), "signature_mismatch");
  });

  it("signs the request's query string even when the configured publicUrl has one: a changed or added parameter is refused", () => {
    const auth = new TwilioSignature(TOKEN, { publicUrl: PUBLIC + "?tenant=acme" });
    const signedUrl = PUBLIC + "?tenant=acme";
    expectAccepted(auth, formRequest(SMS, { signedUrl, query: "?tenant=acme" }));
    expectRefused(auth, formRequest(SMS, { signedUrl, query: "?tenant=evil" }), "signature_mismatch");
    expectRefused(auth, formRequest(SMS, { signedUrl, query: "?tenant=acme&admin=1" }), "signature_mismatch");
    // Signed as typed, received with the same parameters reordered: accepted; with one changed: not.
    const typed = new TwilioSignature(TOKEN, { publicUrl: PUBLIC + "?b=2&a=1" });
    expectAccepted(typed, formRequest(SMS, { signedUrl: PUBLIC + "?b=2&a=1", query: "?a=1&b=2" }));
    expectRefused(typed, formRequest(SMS, { signedUrl: PUBLIC + "?b=2&a=1", query: "?a=1&b=3" }), "signature_mismatch");
  });

  it("refuses when the URL it was signed for is not the one configured (TLS ended at a proxy)", () => {
    expectRefused(new TwilioSignature(TOKEN), formRequest(SMS, { publicUrl: "http://127.0.0.1:8080/twilio/sms" }), "signature_mismatch");
    expectAccepted(new TwilioSignature(TOKEN, { publicUrl: PUBLIC }), formRequest(SMS, { publicUrl: "http://127.0.0.1:8080/twilio/sms" }));
  });

  it("accepts the URL signed with or without the default port, as Twilio's library does", () => {
    expectAccepted(new TwilioSignature(TOKEN), formRequest(SMS, { signedUrl: "https://hooks.example.com:443/twilio/sms" }));
    expectAccepted(new TwilioSignature(TOKEN, { publicUrl: "https://hooks.example.com:443/twilio/sms" }), formRequest(SMS));
  });

  it("sorts parameters by name and a repeated name's distinct values", () => {
    const params: Params = { Zeta: "z", alpha: "a", Media: ["b", "a", "b"], Body: "x" };
    const req = formRequest(params);
    expectAccepted(new TwilioSignature(TOKEN), req);
    expect(twilio.validateRequest(TOKEN, req.headers["x-twilio-signature"] as string, PUBLIC, params as Record<string, string>)).to.equal(true);
  });

  it("verifies non-ASCII form values", () => {
    const params: Params = { ...SMS, Body: "Grüße aus Köln 🎉 — ✓ 日本" };
    expectAccepted(new TwilioSignature(TOKEN), formRequest(params));
  });

  it("refuses a tampered, added or dropped parameter", () => {
    const auth = new TwilioSignature(TOKEN);
    expectRefused(auth, formRequest(SMS, { body: encodeForm({ ...SMS, Body: "Hello there!" }) }), "signature_mismatch");
    expectRefused(auth, formRequest(SMS, { body: encodeForm({ ...SMS, Extra: "1" }) }), "signature_mismatch");
    const { NumMedia: _dropped, ...fewer } = SMS;
    expectRefused(auth, formRequest(SMS, { body: encodeForm(fewer) }), "signature_mismatch");
  });

  it("refuses another token; accepts a rotated one", () => {
    expectRefused(new TwilioSignature(TOKEN), formRequest(SMS, { token: OLD_TOKEN }), "signature_mismatch");
    expectAccepted(new TwilioSignature([TOKEN, OLD_TOKEN]), formRequest(SMS, { token: OLD_TOKEN }));
  });

  describe("JSON bodies (bodySHA256)", () => {
    function jsonRequest(body: string, options: { token?: string; hashOf?: string } = {}) {
      const query = `?bodySHA256=${twilio.getExpectedBodyHash(options.hashOf ?? body)}`;
      const url = PUBLIC + query;
      const signature = twilio.getExpectedTwilioSignature(options.token ?? TOKEN, url, {});
      return { url, signature, request: authRequest({ url: "/twilio/sms" + query, headers: { "content-type": "application/json", "x-twilio-signature": signature }, body, publicUrl: url }) };
    }

    it("accepts a JSON body covered by bodySHA256, as validateRequestWithBody does", () => {
      for (const body of [JSON.stringify({ event: "call.completed", sid: "CA1" }), NON_ASCII_BODY]) {
        const { url, signature, request } = jsonRequest(body);
        expectAccepted(new TwilioSignature(TOKEN), request);
        expect(twilio.validateRequestWithBody(TOKEN, signature, url, body)).to.equal(true);
      }
    });

    it("accepts a JSON body covered by bodySHA256 when the configured publicUrl has a query of its own", () => {
      const body = JSON.stringify({ event: "call.completed" });
      const url = `${PUBLIC}?tenant=acme&bodySHA256=${twilio.getExpectedBodyHash(body)}`;
      const signature = twilio.getExpectedTwilioSignature(TOKEN, url, {});
      const request = authRequest({ url: "/twilio/sms" + url.slice(url.indexOf("?")), headers: { "content-type": "application/json", "x-twilio-signature": signature }, body });
      expectAccepted(new TwilioSignature(TOKEN, { publicUrl: PUBLIC + "?tenant=acme" }), request);
    });

    it("refuses a body that does not hash to bodySHA256", () => {
      const { request } = jsonRequest(JSON.stringify({ a: 2 }), { hashOf: JSON.stringify({ a: 1 }) });
      expectRefused(new TwilioSignature(TOKEN), request, "signature_mismatch");
    });

    it("refuses a JSON body without bodySHA256: nothing signs it", () => {
      const signature = twilio.getExpectedTwilioSignature(TOKEN, PUBLIC, {});
      const req = authRequest({ url: "/twilio/sms", headers: { "content-type": "application/json", "x-twilio-signature": signature }, body: "{}", publicUrl: PUBLIC });
      expectRefused(new TwilioSignature(TOKEN), req, "body_not_signed");
    });
  });

  it("accepts a signed GET (parameters in the URL, no body)", () => {
    const url = `${PUBLIC}?From=%2B15005550006&Body=hi`;
    const signature = twilio.getExpectedTwilioSignature(TOKEN, url, {});
    expectAccepted(new TwilioSignature(TOKEN), authRequest({ method: "GET", url: "/twilio/sms?From=%2B15005550006&Body=hi", headers: { "x-twilio-signature": signature }, publicUrl: url }));
  });

  it("refuses a missing or garbage header", () => {
    const good = formRequest(SMS);
    const signature = good.headers["x-twilio-signature"] as string;
    expectRefused(new TwilioSignature(TOKEN), { ...good, headers: { "content-type": FORM_CT } }, "signature_missing");
    for (const garbage of ["garbage", signature.slice(0, -2), signature + "AA", "sha1=" + signature, signature.replace(/=$/, ""), Buffer.alloc(32).toString("base64")]) {
      expectRefused(new TwilioSignature(TOKEN), { ...good, headers: { ...good.headers, "x-twilio-signature": garbage } }, "signature_malformed");
    }
  });

  it("fails closed when the public URL cannot be known", () => {
    const good = formRequest(SMS);
    const req = { ...good, publicUrl: () => { throw new Error("no trusted proxy"); } };
    expectRefused(new TwilioSignature(TOKEN), req, "verification_error");
    expectRefused(new TwilioSignature(TOKEN), { ...good, publicUrl: () => "not a url" }, "verification_error");
  });

  it("checks publicUrl at construction", () => {
    expect(() => new TwilioSignature(TOKEN, { publicUrl: "/relative" })).to.throw(TypeError, /publicUrl/);
    expect(() => new TwilioSignature(TOKEN, { publicUrl: "ftp://x/y" })).to.throw(TypeError, /publicUrl/);
    expect(new TwilioSignature(TOKEN, { publicUrl: PUBLIC }).publicUrl).to.equal(PUBLIC);
  });
});
