import { expect } from "chai";
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { StoreFixture } from "./store-fixture";

const MiB = 1024 * 1024;

/**
 * The embedded store keeps fresh messages in memory (the journal's lane, the hand-off of B-tree
 * messages): bounded in bytes, whatever the bodies weigh. 2,500 queued webhooks of 1 MiB once
 * took 4.9 GiB.
 */
describe("embedded store: memory held for queued webhooks is bounded in bytes", function () {
  this.timeout(180_000);
  const fixture = new StoreFixture("held-memory-");
  afterEach(() => fixture.cleanup());

  it("300 queued 1 MiB webhooks behind a blocked task: under 200 MiB of heap and Buffers (638 MiB before the bound)", async () => {
    const app = join(__dirname, "fixtures", "held-memory-app.js");
    const { stdout } = await promisify(execFile)(process.execPath, ["--expose-gc", app, join(fixture.tempDir(), "data"), "300"], { timeout: 170_000 });
    const used = JSON.parse(stdout) as { rss: number; heapUsed: number; arrayBuffers: number };
    const held = used.heapUsed + used.arrayBuffers;
    // The lane's 64 MiB and the hand-off's 16 MiB, one claimed event, and the app itself;
    // 300 MiB of bodies (twice that with their parsed form) if either holds more.
    expect(held / MiB, `heap ${(used.heapUsed / MiB).toFixed(0)} MiB + Buffers ${(used.arrayBuffers / MiB).toFixed(0)} MiB (RSS ${(used.rss / MiB).toFixed(0)} MiB)`).to.be.below(200);
  });

  it("2,500 queued 16 KiB webhooks of `[{},{},...]`, parsed ten times their raw size: under 200 MiB of heap and Buffers", async () => {
    const app = join(__dirname, "fixtures", "held-memory-app.js");
    const { stdout } = await promisify(execFile)(process.execPath, ["--expose-gc", app, join(fixture.tempDir(), "data"), "2500", "objects"], { timeout: 170_000 });
    const used = JSON.parse(stdout) as { rss: number; heapUsed: number; arrayBuffers: number };
    const held = used.heapUsed + used.arrayBuffers;
    // A parsed body counted at its raw size let the lane's "64 MiB" hold several hundred.
    expect(held / MiB, `heap ${(used.heapUsed / MiB).toFixed(0)} MiB + Buffers ${(used.arrayBuffers / MiB).toFixed(0)} MiB (RSS ${(used.rss / MiB).toFixed(0)} MiB)`).to.be.below(200);
  });
});
