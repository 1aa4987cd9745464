import { expect } from "chai";
import { activityChart } from "../../src/console/activity-chart";
import type { ActivityRow } from "../../src/store/history";

const MINUTE_MS = 60_000;

describe("console: the last hour's chart", () => {
  it("says how long ago each bar is: the current minute is this minute, the first bar 59 minutes ago", () => {
    const now = Date.UTC(2026, 10, 26, 10, 30, 20);
    // As the overview draws it: sixty one-minute bars, the last one the current minute.
    const since = Math.floor(now / MINUTE_MS) * MINUTE_MS - 59 * MINUTE_MS;
    const row = (bucketStart: number, succeeded: number): ActivityRow => ({ bucketStart, task: "billing", received: succeeded, succeeded, pending: 0, failed: 0, dead: 0 });
    const chart = activityChart([row(since, 3), row(since + 59 * MINUTE_MS, 7)], since, MINUTE_MS, Math.ceil((now - since) / MINUTE_MS)).value;
    expect(chart).to.include("<title>7 succeeded, this minute</title>").and.include("<title>3 succeeded, 59 min ago</title>");
  });
});
