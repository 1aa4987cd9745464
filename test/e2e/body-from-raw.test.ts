import { expect } from "chai";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CoreApp, EmbeddedStore, silentLogger, WebhookSource, type ParserMode, type TaskContext, type WebhookEvent } from "../../src/index";
import { until } from "../helpers/wait";

/**
 * On disk a webhook event's body is stored once, as its raw bytes; events read back after a
 * restart must reach the task exactly as they would have before it.
 */
describe("events read back from the embedded store after a restart", function () {
  this.timeout(30_000);
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), "revive-"))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const requests: Array<{ parser: ParserMode; contentType?: string; body: string | Buffer; expected: unknown }> = [
    { parser: "auto", contentType: "application/json", body: '{"a":[1,2,{"b":"caf\u00e9"}]}', expected: { a: [1, 2, { b: "caf\u00e9" }] } },
    { parser: "auto", contentType: "application/x-www-form-urlencoded", body: "x=1&x=2&y=%C3%A9", expected: { x: ["1", "2"], y: "\u00e9" } },
    { parser: "text", contentType: "text/plain; charset=latin1", body: Buffer.from([0x63, 0x61, 0x66, 0xe9]), expected: "caf\u00e9" },
    { parser: "raw", body: Buffer.from([0, 1, 2, 255]), expected: Buffer.from([0, 1, 2, 255]) },
    { parser: "json", body: "", expected: null },
  ];

  it("rebuilds each body from its raw bytes with the source's parser, and keeps the rest of the event", async () => {
    const sources = requests.map((r, i) => new WebhookSource({ path: `/p${i}`, port: 0, parser: r.parser }));
    const build = (handler: (ctx: TaskContext, event: WebhookEvent) => Promise<void>) => {
      const app = new CoreApp("revive", { store: "embedded", dataDir: join(dir, "data"), logger: silentLogger });
      sources.forEach((source, i) => app.task({ source, name: `t${i}` }, handler));
      return app;
    };
    // First life: the tasks never finish, so every event is still on disk at the stop.
    let release!: () => void;
    const never = new Promise<void>((r) => (release = r));
    const first = build(() => never);
    await first.start();
    for (const [i, r] of requests.entries()) {
      const res = await fetch(`${sources[i].url}?n=${i}`, { method: "POST", headers: r.contentType ? { "content-type": r.contentType } : {}, body: r.body });
      expect(res.status).to.equal(202);
    }
    await first.stop({ timeoutMs: 200 });
    release();

    // The stored records hold the raw bytes, not a second copy of the parsed body. (Opened as
    // a consumer: it moves what the journal holds into the B-tree, and reads it from there.)
    const store = new EmbeddedStore({ dir: join(dir, "data"), journal: false });
    await store.open();
    const stored = await store.claim("webhook:t0", 10);
    expect(stored).to.have.length(1);
    expect(stored[0].payload).to.not.have.property("body");
    expect(stored[0].raw!.toString()).to.equal(requests[0].body);
    await store.close();

    // Second life: the events come back from disk, bodies rebuilt.
    const got = new Map<string, WebhookEvent>();
    const second = build(async (ctx, event) => void got.set(ctx.task, event));
    await second.start();
    try {
      await until(() => got.size === requests.length, 10_000);
      for (const [i, r] of requests.entries()) {
        const event = got.get(`t${i}`)!;
        expect(event.body, `request ${i}`).to.deep.equal(r.expected);
        expect(Object.keys(event)).to.deep.equal(["body", "headers", "query", "method", "path", "client", "received_at"]);
        expect(event.query).to.deep.equal({ n: String(i) });
        expect(event.path).to.equal(`/p${i}`);
      }
    } finally {
      await second.stop();
    }
  });
});
