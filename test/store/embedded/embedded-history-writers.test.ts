import { expect } from "chai";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EmbeddedStore } from "../../../src/store/embedded/embedded-store";
import type { EventNote } from "../../../src/store/history";

function note(id: string, receivedAt: number, replayOf?: string): EventNote {
  const base: EventNote = { id, origin: { kind: "webhook", source: "s" }, receivedAt, deliveries: [{ task: "t", queue: "webhook:t", messageId: id }], payload: { body: {}, headers: {} } };
  return replayOf === undefined ? base : { ...base, replayOf };
}

describe("embedded history with two writers (the app, and a CLI replay)", () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), "wt-history-writers-"))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("keeps the replay link a CLI added to an event between two of the app's runs of it", async () => {
    const app = new EmbeddedStore({ dir, sweepIntervalMs: 60_000 });
    await app.open();
    const cli = new EmbeddedStore({ dir, consumer: false, sweepIntervalMs: 60_000 });
    try {
      const t = Date.now();
      app.history!.noteEvent(note("E", t));
      await app.history!.flush();
      app.history!.noteRun({ eventId: "E", run: { task: "t", attempt: 1, startedAt: t, durationMs: 1, outcome: "retry", error: { type: "Error", message: "down" } }, status: "failed" });
      await app.history!.flush();
      // The CLI replays it while it waits for its retry.
      await cli.open();
      cli.history!.noteEvent(note("R", t + 5, "E"));
      await cli.history!.flush();
      // The retry's run: the app's writer must not write back the summary it held from before the link.
      app.history!.noteRun({ eventId: "E", run: { task: "t", attempt: 2, startedAt: t + 10, durationMs: 1, outcome: "success" }, status: "succeeded" });
      await app.history!.flush();
      const event = (await app.history!.get("E"))!;
      expect(event.status).to.equal("succeeded");
      expect(event.runs).to.have.length(2);
      expect(event.replays).to.deep.equal(["R"]);
    } finally {
      await cli.close();
      await app.close();
    }
  });
});
