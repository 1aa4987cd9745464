import { expect } from "chai";
import { WebhookSource, type WebhookSourceOptions } from "../../../src/index";

describe("WebhookSource: options refused at construction", () => {
  const bad: Array<{ title: string; options: Partial<WebhookSourceOptions> & Record<string, unknown>; message: RegExp }> = [
    { title: "a path without a leading slash", options: { path: "hooks" }, message: /path/ },
    { title: "a path with a query string", options: { path: "/hooks?x=1" }, message: /path/ },
    { title: "a path with a space", options: { path: "/my hooks" }, message: /path/ },
    // No request can reach it: a client percent-encodes it (404), raw UTF-8 is malformed HTTP (400).
    { title: "a path with a character that is not printable ASCII", options: { path: "/café" }, message: /path.*%C3%A9/ },
    { title: "an empty method list", options: { path: "/h", methods: [] }, message: /methods/ },
    { title: "a method that is not a token", options: { path: "/h", methods: ["PO ST" as "POST"] }, message: /methods/ },
    { title: "a port out of range", options: { path: "/h", port: 70_000 }, message: /port/ },
    { title: "a port that is not an integer", options: { path: "/h", port: 80.5 }, message: /port/ },
    { title: "an empty host", options: { path: "/h", host: "" }, message: /host/ },
    { title: "an unknown parser", options: { path: "/h", parser: "xml" as never }, message: /parser/ },
    { title: "an unknown ack mode", options: { path: "/h", ack: "eventually" as never }, message: /ack/ },
    { title: "an unknown reply mode", options: { path: "/h", reply: "echo" as never }, message: /reply/ },
    { title: "a zero body limit", options: { path: "/h", maxBodyBytes: 0 }, message: /maxBodyBytes/ },
    { title: "an auth without verify()", options: { path: "/h", auth: {} as never }, message: /auth/ },
    // Found out only at the first request, after storing the event, by a crash of the process.
    { title: "a response that is not a WebhookResponse", options: { path: "/h", response: { status_code: 201, body: { ok: true } } as never }, message: /response/ },
    { title: "a malformed trustProxy", options: { path: "/h", trustProxy: "not-an-address" }, message: /trustProxy/ },
  ];
  for (const b of bad) {
    it(`refuses ${b.title}, naming the option`, () => {
      expect(() => new WebhookSource(b.options as WebhookSourceOptions)).to.throw(TypeError, b.message);
    });
  }

  it("has documented defaults: POST, 127.0.0.1:8080, auto parser, no trailing slash", () => {
    const source = new WebhookSource({ path: "/hooks/" });
    expect(source.options).to.include({ path: "/hooks", host: "127.0.0.1", port: 8080, parser: "auto", maxBodyBytes: 1024 * 1024, reply: "fixed" });
    expect(source.options.methods).to.deep.equal(["POST"]);
    expect(source.url).to.equal("http://127.0.0.1:8080/hooks");
  });
});
