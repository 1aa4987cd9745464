import { expect } from "chai";
import { TaskTimeoutError, type DeadLetterEventPayload, type RetryEventPayload } from "../../src/index";
import { useApps, webhook } from "../helpers/app";
import { postJson } from "../helpers/http-client";
import { recordingLogger, until, type LogLine } from "../helpers/wait";

describe("task control: timeouts and events", () => {
  const newApp = useApps();

  it("a handler that never resolves times out: outcome timeout, its slot freed, later events run", async () => {
    const logs: LogLine[] = [];
    const app = newApp("timeouts", { logger: recordingLogger(logs) });
    const source = webhook({ path: "/t" });
    const done: number[] = [];
    app.task({ source, name: "hangs-once", concurrency: 1, timeoutMs: 100, retry: { attempts: 2, initialDelayMs: 10, maxDelayMs: 10 } }, (_ctx, event: { body: { n: number } }) => {
      if (event.body.n === 0) return new Promise(() => undefined); // never settles
      done.push(event.body.n);
      return undefined;
    });
    const retries: RetryEventPayload[] = [];
    const letters: DeadLetterEventPayload[] = [];
    app.on("retry", (payload) => void retries.push(payload));
    app.on("deadLetter", (payload) => void letters.push(payload));
    await app.start();
    for (let n = 0; n < 3; n++) expect((await postJson(source.url, { n })).status).to.equal(202);
    // With one slot, 1 and 2 can only run once the hung run gave its slot back.
    await until(() => done.length === 2 && letters.length === 1, 3_000);
    expect(done).to.deep.equal([1, 2]);
    expect(retries).to.have.length(1);
    expect(retries[0]).to.include({ task: "hangs-once", attempt: 1, outcome: "timeout" });
    expect(retries[0].error).to.be.instanceOf(TaskTimeoutError);
    expect(retries[0].retryAt).to.be.a("number");
    expect(letters[0]).to.include({ task: "hangs-once", attempts: 2, outcome: "timeout", queue: "webhook:hangs-once" });
    expect(logs.filter((l) => l.msg.startsWith("task timed out"))).to.have.length(2);
    const [letter] = await app.deadLetters.list();
    expect(letter.error).to.equal('task "hangs-once" did not finish within 100 ms');
  });

  it("retry and deadLetter listeners: one that throws is logged and the runner goes on", async () => {
    const logs: LogLine[] = [];
    const app = newApp("events", { logger: recordingLogger(logs) });
    const source = webhook({ path: "/e" });
    let calls = 0;
    app.task({ source, name: "fails", retry: { attempts: 3, initialDelayMs: 5, maxDelayMs: 5 } }, () => {
      calls++;
      throw new Error(`failure ${calls}`);
    });
    const seen: string[] = [];
    app.on("retry", (p) => {
      seen.push(`retry ${p.attempt}`);
      throw new Error("listener bug");
    });
    app.on("deadLetter", async (p) => {
      seen.push(`dead ${p.attempts}`);
      throw new Error("async listener bug");
    });
    await app.start();
    await postJson(source.url, {});
    await until(() => seen.length === 3 && logs.filter((l) => l.msg.includes("listener failed")).length === 3);
    expect(seen).to.deep.equal(["retry 1", "retry 2", "dead 3"]);
    expect(calls).to.equal(3);
  });

  it("refuses a timeoutMs that is not a positive number", () => {
    const app = newApp("bad-timeout");
    expect(() => app.task({ source: "q", name: "t", timeoutMs: 0 }, () => undefined)).to.throw(/timeoutMs must be a positive number/);
    expect(() => app.task({ source: "q", name: "t", timeoutMs: Number.NaN }, () => undefined)).to.throw(/timeoutMs/);
  });
});
