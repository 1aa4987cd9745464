import { expect } from "chai";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { open } from "lmdb";
import { Packr } from "msgpackr";
import { EmbeddedStore } from "../../../src/store/embedded/embedded-store";
import { PAYLOAD_ENCODING } from "../../../src/store/payload-codec";
import { HISTORY_CODEC } from "../../../src/store/embedded/history/history-codec";
import type { SummaryRecord } from "../../../src/store/embedded/history/history-records";

/** What the timeline held before its values were encoded by hand: msgpackr with plain maps. */
const msgpackr = new Packr({ useRecords: false });

function record(n: number, bodyBytes = 300): SummaryRecord {
  return {
    o: n % 2 === 0 ? "github" : "sörce-ünïcode ✓",
    n: "push",
    d: [
      ["build", 1, 1],
      ["deploy", 3, 5, "boom ".repeat(20), "other-queue", `m-${n}`],
    ],
    u: [
      ["build", 1, 1_764_100_000_123 + n, 0.4375, "success", null, null, null, [`child-${n}`]],
      ["deploy", 5, 1_764_100_000_200 + n, 12, "dead_letter", "TypeError", "x".repeat(300), "at y\n".repeat(500)],
    ],
    pa: `parent-${n}`,
    c: [`child-${n}`],
    y: [],
    b: Buffer.alloc(bodyBytes, n % 256),
  };
}

describe("the embedded history's codec", () => {
  it("decodes to what msgpackr gives for the same record, for every kind of value a record holds", () => {
    const numbers = [0, 1, 127, 128, 255, 256, 65_535, 65_536, 2 ** 32 - 1, 2 ** 32, 2 ** 53 - 1, -1, -32, -33, -128, -129, -32_768, -32_769, -(2 ** 31), -(2 ** 31) - 1, 0.5, -2.25, Number.NaN, Infinity];
    const values: unknown[] = [record(1), record(2, 70_000), { numbers, flags: [true, false, null, undefined], long: "é".repeat(40_000), empty: "", keys: Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${i}`, i])) }];
    for (const value of values) {
      const bytes = Buffer.from(HISTORY_CODEC.encode(value));
      expect(HISTORY_CODEC.decode(bytes)).to.deep.equal(msgpackr.unpack(msgpackr.pack(value)));
      expect(msgpackr.unpack(bytes), "plain MessagePack: msgpackr reads it too").to.deep.equal(msgpackr.unpack(msgpackr.pack(value)));
    }
  });

  it("reads what msgpackr wrote (a history written before), and hands back bodies that are copies", () => {
    const old = Buffer.from(msgpackr.pack(record(3)));
    const decoded = HISTORY_CODEC.decode(old) as SummaryRecord;
    expect(decoded).to.deep.equal(record(3));
    old.fill(0);
    expect(decoded.b).to.deep.equal(Buffer.alloc(300, 3));
  });

  it("gives a value of another kind (a Map, a Date, a typed array other than a Buffer, an object of a class or without a prototype) to msgpackr whole", () => {
    class Point {
      constructor(readonly x: number) {}
    }
    const bare = Object.assign(Object.create(null) as Record<string, unknown>, { a: 1 });
    const values: unknown[] = [{ o: "q", when: new Date(5), tags: new Map([["a", 1]]) }, { bytes: new Uint8Array([1, 2, 3]) }, { at: new Point(3) }, { query: bare }];
    for (const value of values) expect(HISTORY_CODEC.decode(HISTORY_CODEC.encode(value))).to.deep.equal(msgpackr.unpack(msgpackr.pack(value)));
  });

  it("encodes a webhook payload's record as msgpackr did (headers, query, raw bytes, trace id)", () => {
    const value = { p: { headers: { "content-type": "application/json", "x-hub-signature-256": "[redacted]", "user-agent": "GitHub-Hookshot/8f9a2c1 ünï" }, query: { a: "1", list: ["x", "y"] }, method: "POST", path: "/github", client: "127.0.0.1", received_at: 1_764_100_000.123 }, r: Buffer.from('{"a":1}'), b: 1, t: "0af7651916cd43dd8448eb211c80319c" };
    expect(HISTORY_CODEC.decode(HISTORY_CODEC.encode(value))).to.deep.equal(msgpackr.unpack(msgpackr.pack(value)));
  });

  it("leaves every value it handed out untouched while later ones fill new slabs", () => {
    const encoded: Buffer[] = [];
    // About 2 MiB: values go across several slabs, one of them larger than a slab.
    for (let n = 0; n < 600; n++) encoded.push(HISTORY_CODEC.encode(record(n, n === 300 ? 400_000 : 2_000)));
    encoded.forEach((bytes, n) => expect(HISTORY_CODEC.decode(bytes), `value ${n}`).to.deep.equal(record(n, n === 300 ? 400_000 : 2_000)));
  });

  it("opens a history whose timeline msgpackr wrote, and shows its events", async () => {
    const dir = mkdtempSync(join(tmpdir(), "wt-history-codec-"));
    try {
      const root = open({ path: join(dir, "history"), maxDbs: 6, pageSize: 8_192 });
      const timeline = root.openDB<SummaryRecord, [number, string]>({ name: "timeline", ...PAYLOAD_ENCODING });
      const index = root.openDB<number, string>({ name: "index", ...PAYLOAD_ENCODING });
      const body = Buffer.from(msgpackr.pack({ p: { headers: { "content-type": "application/json" } }, r: Buffer.from('{"a":1}'), b: 1 }));
      await timeline.put([1_000, "old"], { o: "github", d: [["build", 1, 1]], u: [["build", 1, 1_001, 2, "success"]], b: body });
      await index.put("old", 1_000);
      await root.close();

      const store = new EmbeddedStore({ dir });
      await store.open();
      try {
        const event = await store.history.get("old");
        expect(event?.payload).to.deep.equal({ body: { a: 1 }, headers: { "content-type": "application/json" } });
        expect(event?.deliveries.map((d) => d.status)).to.deep.equal(["succeeded"]);
        expect(event?.runs).to.have.length(1);
        expect((await store.history.list({})).events.map((e) => e.id)).to.deep.equal(["old"]);
      } finally {
        await store.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
