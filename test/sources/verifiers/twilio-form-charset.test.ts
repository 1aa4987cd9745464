import { expect } from "chai";
import twilio from "twilio";
import { TwilioSignature } from "../../../src/sources/webhook/verifiers";
import { sleep, startWebhook, useApps } from "../../helpers/app";
import { send } from "../../helpers/http-client";

const TOKEN = "auth-token-0123456789abcdef";
const PUBLIC = "https://hooks.example.com/twilio/sms";
const FORM_CT = "application/x-www-form-urlencoded";

/**
 * Twilio signs its form parameters as UTF-8 text. Content-Type is not signed, so a copy of a
 * delivery sent again with another charset (or with bytes that only a lossy UTF-8 decoding
 * equates with the signed ones) must not verify as the parameters Twilio signed.
 */
describe("TwilioSignature and the form's charset (real sockets)", () => {
  const makeApp = useApps();
  // An SMS whose text holds U+FFFD, as Twilio sends it: percent-escaped UTF-8.
  const params = { From: "+15005550006", Body: "a\uFFFDb" };
  const signed = new URLSearchParams(params).toString();
  const signature = twilio.getExpectedTwilioSignature(TOKEN, PUBLIC, params);

  it("accepts the form as Twilio sends it, with or without charset=UTF-8", async () => {
    const { source, events } = await startWebhook(makeApp, { auth: new TwilioSignature(TOKEN), publicUrl: PUBLIC });
    for (const contentType of [FORM_CT, `${FORM_CT}; charset=UTF-8`]) {
      const reply = await send(source.url, { body: signed, headers: { "content-type": contentType, "x-twilio-signature": signature } });
      expect(reply.status, reply.text).to.equal(202);
    }
    const received = await events.waitFor(2);
    for (const { event } of received) expect(event.body).to.deep.equal(params);
  });

  it("refuses a copy whose bytes or charset change what the parameters say, and makes no event", async () => {
    const { source, events } = await startWebhook(makeApp, { auth: new TwilioSignature(TOKEN), publicUrl: PUBLIC });
    const forgeries: Array<{ body: string | Buffer; contentType: string }> = [
      // %E9 is not UTF-8: a lossy decoding reads U+FFFD, as signed; latin1 reads "é".
      { body: signed.replace("%EF%BF%BD", "%E9"), contentType: `${FORM_CT}; charset=iso-8859-1` },
      // A raw byte instead of the escape, read as windows-1252 "ÿ".
      { body: Buffer.from(signed.replace("%EF%BF%BD", "\xff"), "latin1"), contentType: `${FORM_CT}; charset=windows-1252` },
      // Declared UTF-8 but not UTF-8: refused by the verifier, not first read as the signed U+FFFD.
      { body: signed.replace("%EF%BF%BD", "%E9"), contentType: FORM_CT },
      // The signed bytes themselves, read in another charset: "Ã©"-style mojibake, not what was signed.
      { body: signed, contentType: `${FORM_CT}; charset=iso-8859-1` },
    ];
    for (const { body, contentType } of forgeries) {
      const reply = await send(source.url, { body, headers: { "content-type": contentType, "x-twilio-signature": signature } });
      expect(reply.status, `${contentType}: ${reply.text}`).to.equal(401);
      expect(reply.json().error).to.equal("body_not_signed");
      expect(reply.text).to.not.include(signature);
    }
    await sleep(50);
    expect(events.count).to.equal(0);
  });
});
