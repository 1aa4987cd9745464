import { expect } from "chai";
import { mkdirSync, mkdtempSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CoreApp, WebhookSource } from "../../src/index";
import { EmbeddedStore } from "../../src/store/embedded/embedded-store";
import { recordingLogger, type LogLine } from "../helpers/wait";

interface Watch {
  /** Milliseconds from the change to the first 503. */
  readonly firstRefusalMs: number;
  /** 2xx answers after the change. */
  readonly acceptedAfter: number;
  /** 2xx answers after the first 503 (the refusal must last). */
  readonly acceptedAfterRefusal: number;
}

/** Sends a request every 25 ms for `ms` after `change()`; tells when the 503s began. */
async function sendThrough(url: string, change: () => void, ms = 2_500): Promise<Watch> {
  change();
  const start = Date.now();
  let firstRefusalMs = Infinity;
  let acceptedAfter = 0;
  let acceptedAfterRefusal = 0;
  for (let n = 0; Date.now() - start < ms; n++) {
    const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ n }) });
    await res.arrayBuffer();
    if (res.status === 202) {
      acceptedAfter++;
      if (firstRefusalMs !== Infinity) acceptedAfterRefusal++;
    } else {
      expect(res.status).to.equal(503);
      if (firstRefusalMs === Infinity) firstRefusalMs = Date.now() - start;
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  return { firstRefusalMs, acceptedAfter, acceptedAfterRefusal };
}

describe("the data directory deleted or replaced under a running app", function () {
  this.timeout(30_000);
  let base: string;
  let app: CoreApp | undefined;
  beforeEach(() => (base = mkdtempSync(join(tmpdir(), "dir-lost-"))));
  afterEach(async () => {
    await app?.stop({ timeoutMs: 2_000 });
    app = undefined;
    rmSync(base, { recursive: true, force: true });
  });

  async function start(journal: boolean, keyed = false): Promise<{ url: string; dir: string; lines: LogLine[] }> {
    const dir = join(base, "data");
    const lines: LogLine[] = [];
    const source = new WebhookSource({ path: "/in", host: "127.0.0.1", port: 0 });
    const logger = recordingLogger(lines);
    // The journal can be turned off only on a store built by hand.
    const store = journal ? "embedded" : new EmbeddedStore({ dir, journal: false, logger });
    app = new CoreApp("lost", { store, dataDir: dir, logger });
    // Keyed events go to the B-tree in a transaction of their own (key-lines.ts).
    app.task({ source, name: "t", orderingKey: keyed ? () => "one-key" : undefined }, async () => undefined);
    await app.start();
    for (let i = 0; i < 5; i++) expect((await fetch(source.url, { method: "POST", body: "{}" })).status).to.equal(202);
    return { url: source.url, dir, lines };
  }

  const lostLines = (lines: readonly LogLine[]) => lines.filter((line) => /data directory was deleted or replaced/.test(line.msg));

  it("deleted and replaced by an empty one: no 202 into deleted files, 503 at once, one error line", async () => {
    const { url, dir, lines } = await start(true);
    const seen = await sendThrough(url, () => {
      rmSync(dir, { recursive: true, force: true });
      mkdirSync(dir);
    });
    expect(seen.acceptedAfter, "202s after the deletion").to.equal(0);
    expect(seen.firstRefusalMs).to.be.below(1_000);
    const [line, ...more] = lostLines(lines);
    expect(more).to.have.length(0);
    expect(line!.fields!.reason).to.be.a("string");
    expect(app!.store.failure?.message).to.match(/is gone/);
  });

  it("moved away and replaced by an empty one: 503 within a second, for good, one error line", async () => {
    const { url, dir, lines } = await start(true);
    const seen = await sendThrough(url, () => {
      renameSync(dir, join(base, "moved"));
      mkdirSync(dir);
    });
    expect(seen.firstRefusalMs).to.be.below(1_500);
    expect(seen.acceptedAfterRefusal).to.equal(0);
    expect(lostLines(lines)).to.have.length(1);
    expect(lostLines(lines)[0]!.fields!.reason).to.match(/replaced/);
  });

  it("deleted, with the journal off (every message in the B-tree): no 202 into deleted files, one error line", async () => {
    const { url, dir, lines } = await start(false);
    const seen = await sendThrough(url, () => rmSync(dir, { recursive: true, force: true }));
    expect(seen.acceptedAfter, "202s after the deletion").to.equal(0);
    expect(seen.firstRefusalMs).to.be.below(1_000);
    expect(seen.acceptedAfterRefusal).to.equal(0);
    expect(lostLines(lines)).to.have.length(1);
  });
  it("deleted, with an ordering key (keyed events go to the B-tree): no 202 into deleted files, one error line", async () => {
    const { url, dir, lines } = await start(true, true);
    const seen = await sendThrough(url, () => rmSync(dir, { recursive: true, force: true }));
    expect(seen.acceptedAfter, "202s after the deletion").to.equal(0);
    expect(seen.firstRefusalMs).to.be.below(1_000);
    expect(seen.acceptedAfterRefusal).to.equal(0);
    expect(lostLines(lines)).to.have.length(1);
  });
});
