import { expect } from "chai";
import { CoreApp, MemoryStore, Queue, silentLogger } from "../../src/index";
import { ForwardingStore } from "../../src/store/forwarding-store";
import { MAX_GROUP_SIZE } from "../../src/app/flow/group-options";
import { useApps } from "../helpers/app";

/** A store whose engine cannot claim groups: an app must refuse a debounced or batched task on it. */
class NoGroupsStore extends ForwardingStore {
  override claimGroups = undefined;
  override completeGroup = undefined;
  override get engine(): string {
    return "no-groups";
  }
}

describe("debounce and batch options: refusals", () => {
  const newApp = useApps();
  const jobs = new Queue<{ id: string }>("jobs");
  const refused = (options: Record<string, unknown>, message: RegExp) => {
    const app = new CoreApp("refusals", { store: "memory", logger: silentLogger });
    expect(() => app.task({ source: jobs, name: "t", ...options } as never, async () => undefined)).to.throw(TypeError, message);
  };

  it("refuses debounce together with batch", () => refused({ debounce: { periodMs: 10 }, batch: { maxSize: 2, maxWaitMs: 10 } }, /task "t": debounce and batch cannot be used together/));
  it("refuses orderingKey with either", () => {
    refused({ debounce: { periodMs: 10 }, orderingKey: () => "k" }, /task "t": debounce and orderingKey cannot be used together/);
    refused({ batch: { maxSize: 2, maxWaitMs: 10 }, orderingKey: () => "k" }, /task "t": batch and orderingKey cannot be used together/);
  });
  it("refuses rateLimit with either", () => refused({ debounce: { periodMs: 10 }, rateLimit: { limit: 1, periodMs: 10 } }, /debounce and rateLimit cannot be used together/));
  it("refuses a shared concurrency limit with either, and takes a number", () => {
    refused({ batch: { maxSize: 2, maxWaitMs: 10 }, concurrency: { limit: 2 } }, /with batch, concurrency must be a number/);
    const app = new CoreApp("ok", { store: "memory", logger: silentLogger });
    app.task({ source: jobs, name: "t", batch: { maxSize: 2, maxWaitMs: 10 }, concurrency: 3 }, async () => undefined);
    expect(app.tasks[0]!.concurrency).to.equal(3);
  });
  it("refuses a debounce that is not { periodMs, key?, maxWaitMs? }", () => {
    refused({ debounce: 100 }, /task "t": debounce must be \{ periodMs, key\?, maxWaitMs\? \}/);
    refused({ debounce: {} }, /debounce\.periodMs must be an integer number of milliseconds from 1 to 2147483647, got undefined/);
    refused({ debounce: { periodMs: 1.5 } }, /debounce\.periodMs must be an integer/);
    refused({ debounce: { periodMs: 2 ** 31 } }, /debounce\.periodMs must be an integer number of milliseconds from 1 to 2147483647/);
    refused({ debounce: { periodMs: 100, maxWaitMs: 50 } }, /debounce\.maxWaitMs \(50\) must be at least debounce\.periodMs \(100\)/);
    refused({ debounce: { periodMs: 100, key: "body.id" } }, /debounce\.key must be a function \(event\) => string \| undefined, got "body\.id"/);
    refused({ debounce: { periodMs: 100, period: 5 } }, /debounce: unknown option "period" \(known: periodMs, key, maxWaitMs\)/);
  });
  it("refuses a batch that is not { maxSize, maxWaitMs, key? }", () => {
    refused({ batch: [] }, /task "t": batch must be \{ maxSize, maxWaitMs, key\? \}/);
    refused({ batch: { maxWaitMs: 10 } }, /batch\.maxSize must be an integer from 1 to 10000, got undefined/);
    refused({ batch: { maxSize: MAX_GROUP_SIZE + 1, maxWaitMs: 10 } }, /batch\.maxSize must be an integer from 1 to 10000, got 10001/);
    refused({ batch: { maxSize: 5 } }, /batch\.maxWaitMs must be an integer number of milliseconds/);
    refused({ batch: { maxSize: 5, maxWaitMs: 10, key: 3 } }, /batch\.key must be a function/);
    refused({ batch: { maxSize: 5, maxWaitMs: 10, size: 3 } }, /batch: unknown option "size" \(known: maxSize, maxWaitMs, key\)/);
  });

  it("an app refuses to start a debounced task on a store that cannot claim groups, naming the task and the store", async () => {
    const app = newApp("no-groups", { store: new NoGroupsStore(new MemoryStore()) });
    app.task({ source: jobs, name: "grouped", debounce: { periodMs: 100 } }, async () => undefined);
    let error: unknown;
    await app.start().catch((e: unknown) => (error = e));
    expect(error).to.be.instanceOf(Error);
    expect((error as Error).message).to.equal('task "grouped" uses debounce, which the no-groups store does not support (it cannot claim groups of events); use the memory, embedded or PostgreSQL store');
  });

  it("a key function that throws refuses the event when it enters the queue, naming the option", async () => {
    const app = newApp();
    app.task({ source: jobs, name: "keyed", batch: { maxSize: 5, maxWaitMs: 10, key: () => { throw new Error("no tenant"); } } }, async () => undefined);
    await app.start();
    expect(() => app.copiesFor("jobs", { id: "1", payload: { id: "1" }, attempts: 0, enqueuedAt: Date.now() })).to.throw(/task "keyed": batch\.key threw: no tenant/);
  });
});
