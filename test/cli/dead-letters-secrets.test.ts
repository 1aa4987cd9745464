import { expect } from "chai";
import { operate, parseDeadLetterArgs } from "../../src/cli/dead-letters-command";
import type { Output } from "../../src/cli/output";
import { MemoryStore } from "../../src/index";
import type { Store } from "../../src/store/store";
import { PostgresFixture } from "../store/postgres/postgres-fixture";

function capture(): Output & { text: () => string } {
  const lines: string[] = [];
  return { out: (l) => lines.push(l), err: (l) => lines.push(l), text: () => lines.join("\n") };
}

/** `dead-letters show` prints a stored event: its credentials and signatures are redacted, on every engine. */
describe("CLI: dead-letters show redacts secret headers", function () {
  this.timeout(20_000);
  const fixture = new PostgresFixture();
  afterEach(() => fixture.cleanup());

  async function withLetter(store: Store): Promise<Store> {
    await store.open();
    const headers = { authorization: "Bearer hunter1", Cookie: "sid=hunter2", "x-hub-signature-256": "sha256=hunter3", "content-type": "application/json" };
    await store.enqueue("webhook:orders", { id: "evt-1", payload: { headers, body: { order: 7 } }, attempts: 0, enqueuedAt: Date.UTC(2026, 0, 1) });
    const [message] = await store.claim("webhook:orders", 1);
    await store.deadLetter({ queue: "webhook:orders", task: "orders", message, error: "boom", attempts: 1, diedAt: Date.UTC(2026, 0, 2) });
    return store;
  }

  for (const engine of ["memory", "postgres"] as const) {
    it(`on ${engine}: as text and as JSON`, async () => {
      const store = await withLetter(engine === "memory" ? new MemoryStore() : fixture.store({ consumer: false }));
      try {
        for (const args of [["show", "evt-1", "w.yaml"], ["show", "evt-1", "w.yaml", "--json"], ["list", "w.yaml", "--json"]]) {
          const out = capture();
          expect(await operate(store, parseDeadLetterArgs(args), out)).to.equal(0);
          if (args[0] === "list") continue; // the list shows no payload
          expect(out.text(), args.join(" ")).to.not.match(/hunter/);
          expect(out.text(), args.join(" ")).to.contain("[redacted]").and.to.contain("application/json");
        }
      } finally {
        await store.close();
      }
    });
  }
});

describe("CLI: dead-letters show prints any stored value", () => {
  it("a BigInt as its decimal text, bytes as base64, an error's control characters escaped, as text and as JSON (it failed: Do not know how to serialize a BigInt)", async () => {
    const store = new MemoryStore();
    await store.open();
    try {
      await store.enqueue("totals", { id: "big-1", payload: { total: 12345678901234567890n, bytes: Buffer.from([1, 2]) }, attempts: 0, enqueuedAt: Date.UTC(2026, 0, 1) });
      const [message] = await store.claim("totals", 1);
      await store.deadLetter({ queue: "totals", task: "sum", message, error: "bad \u001b[2Jinput", attempts: 1, diedAt: Date.UTC(2026, 0, 2) });
      // A handler's error is printed with its terminal control characters escaped, in the list and the details.
      for (const args of [["list", "w.yaml"], ["show", "big-1", "w.yaml"]]) {
        const shown = capture();
        expect(await operate(store, parseDeadLetterArgs(args), shown)).to.equal(0);
        expect(shown.text(), args[0]).to.contain("bad \\u001b[2Jinput").and.not.match(/\u001b/);
      }
      const text = capture();
      expect(await operate(store, parseDeadLetterArgs(["show", "big-1", "w.yaml"]), text)).to.equal(0);
      expect(text.text()).to.contain('"total": "12345678901234567890"').and.contain('"base64": "AQI="');
      const json = capture();
      expect(await operate(store, parseDeadLetterArgs(["show", "big-1", "w.yaml", "--json"]), json)).to.equal(0);
      expect((JSON.parse(json.text()) as { payload: unknown }).payload).to.deep.equal({ total: "12345678901234567890", bytes: { base64: "AQI=" } });
    } finally {
      await store.close();
    }
  });
});
