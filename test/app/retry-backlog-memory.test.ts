import { expect } from "chai";
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

/**
 * Events waiting for a retry are kept by the store; the runner holds one timer for them all,
 * not one each. A timer per retry (some 450 bytes: jitter gives each its own duration) made
 * a backlog in backoff grow the heap even when the store kept it on disk or in PostgreSQL.
 */
describe("runner: events in backoff cost the heap little", function () {
  this.timeout(90_000);
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), "retry-backlog-"))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("10,000 events in backoff on the embedded store: under 400 bytes of heap each (700 before)", async () => {
    const app = join(__dirname, "fixtures", "retry-backlog-app.js");
    const { stdout } = await promisify(execFile)(process.execPath, ["--expose-gc", app, join(dir, "data"), "10000"], { timeout: 85_000 });
    const { growth, inBackoff } = JSON.parse(stdout) as { growth: number; inBackoff: number };
    expect(inBackoff).to.equal(9_900);
    expect(growth / inBackoff, `heap grew by ${(growth / 1e6).toFixed(1)} MB`).to.be.below(400);
  });
});
