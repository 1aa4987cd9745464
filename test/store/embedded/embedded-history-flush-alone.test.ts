import { expect } from "chai";
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

/**
 * A process with nothing else to do (a script, the CLI) awaiting the history's flush: lmdb's
 * pending commit does not keep Node's event loop alive, so without a handle of the writer's
 * own such a process ended in the middle of its second batch, its notes unwritten.
 */
describe("the embedded history in a process with nothing else to do", () => {
  it("writes batch after batch when flush() is awaited, and the process goes on", async () => {
    const dir = mkdtempSync(join(tmpdir(), "wt-history-alone-"));
    const store = join(__dirname, "..", "..", "..", "src", "store", "embedded", "embedded-store.js");
    const script = `
      const { EmbeddedStore } = require(${JSON.stringify(store)});
      (async () => {
        const store = new EmbeddedStore({ dir: ${JSON.stringify(dir)} });
        await store.open();
        const raw = Buffer.from(JSON.stringify({ pad: "x".repeat(300) }));
        for (let i = 0; i < 3000; i++) {
          const id = "e" + i;
          store.history.noteEvent({ id, origin: { kind: "webhook", source: "s" }, receivedAt: 1000 + i, deliveries: [{ task: "t", queue: "webhook:t", messageId: id }], payload: { body: JSON.parse(raw.toString()), headers: {} }, raw });
          store.history.noteRun({ eventId: id, run: { task: "t", attempt: 1, startedAt: 1001 + i, durationMs: 1, outcome: "success" }, status: "succeeded" });
          if (i % 1000 === 999) await store.history.flush();
        }
        console.log(JSON.stringify(await store.history.size()));
        await store.close();
      })();
    `;
    try {
      const { stdout } = await run(process.execPath, ["-e", script], { timeout: 60_000 });
      expect(stdout.trim(), "the process printed the history's size at the end").to.not.equal("");
      expect((JSON.parse(stdout) as { events: number }).events).to.equal(3000);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
