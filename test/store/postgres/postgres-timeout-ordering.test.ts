import { expect } from "chai";
import type { WebhookEvent } from "../../../src/index";
import { webhook } from "../../helpers/app";
import { postJson } from "../../helpers/http-client";
import { until } from "../../helpers/wait";
import { PostgresFixture } from "./postgres-fixture";

/**
 * A run that outlives its task's timeoutMs is abandoned, not stopped: its key is free for the
 * next run while the abandoned one still goes on. docs/ordering.md says so; this pins it.
 */
describe("PostgreSQL: a timed-out run of a keyed event no longer holds its key", function () {
  this.timeout(30_000);
  const fixture = new PostgresFixture();
  afterEach(() => fixture.cleanup());

  it("the next run of the key starts while the timed-out one is still running", async () => {
    const log: string[] = [];
    let running = 0;
    let overlapped = false;
    let firstRun = true;
    const source = webhook();
    const app = fixture.app("timeout-key");
    app.task<WebhookEvent<{ key: string; n: number }>>(
      { source, name: "keyed", concurrency: 4, timeoutMs: 200, retry: { attempts: 3, initialDelayMs: 10, maxDelayMs: 10 }, orderingKey: (e) => e.body.key },
      async (_ctx, event) => {
        running++;
        if (running > 1) overlapped = true;
        const slow = event.body.n === 1 && firstRun;
        if (slow) firstRun = false;
        log.push(`start ${event.body.n}${slow ? " (slow)" : ""}`);
        await new Promise((resolve) => setTimeout(resolve, slow ? 1_500 : 20));
        log.push(`end ${event.body.n}${slow ? " (slow)" : ""}`);
        running--;
      },
    );
    await app.start();
    expect((await postJson(source.url, { key: "k", n: 1 })).status).to.equal(202);
    expect((await postJson(source.url, { key: "k", n: 2 })).status).to.equal(202);
    await until(() => log.filter((l) => l.startsWith("end")).length === 3, 10_000);
    // Event 1 timed out, ran again and succeeded, then event 2 ran: all while the first run of 1 went on.
    expect(log.slice(0, 1)).to.deep.equal(["start 1 (slow)"]);
    expect(log.indexOf("start 2")).to.be.greaterThan(0).and.lessThan(log.indexOf("end 1 (slow)"));
    expect(overlapped).to.equal(true);
  });
});
