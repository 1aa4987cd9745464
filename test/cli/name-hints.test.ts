import { expect } from "chai";
import { operate as deadLetters, parseDeadLetterArgs } from "../../src/cli/dead-letters-command";
import { parseEventsArgs } from "../../src/cli/events-args";
import { operate as events } from "../../src/cli/events-command";
import type { Output } from "../../src/cli/output";
import { MemoryStore } from "../../src/index";

function capture(): Output & { stdout: string[]; stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return { stdout, stderr, out: (l) => stdout.push(l), err: (l) => stderr.push(l) };
}

const NOW = Date.UTC(2026, 10, 24, 18);
const TASKS = [
  { name: "receive", queue: "webhook:receive", input: undefined, emit: "parcels" },
  { name: "pack", queue: "parcels", input: "parcels", emit: undefined },
];

/** A store whose history holds one event handed to "receive", and one dead letter in "webhook:receive". */
async function storeWithHistory(): Promise<MemoryStore> {
  const store = new MemoryStore();
  await store.open();
  store.history.noteEvent({
    id: "e1",
    origin: { kind: "webhook", source: "hooks/orders" },
    receivedAt: NOW,
    deliveries: [{ task: "receive", queue: "webhook:receive", messageId: "e1@receive" }],
    payload: { body: {}, headers: {} },
  });
  await store.history.flush();
  await store.enqueue("webhook:receive", { id: "d1", payload: {}, attempts: 0, enqueuedAt: NOW });
  const [message] = await store.claim("webhook:receive", 1);
  await store.deadLetter({ queue: "webhook:receive", task: "receive", message, error: "x", attempts: 1, diedAt: NOW });
  return store;
}

describe("CLI: --task and --queue that name nothing known", () => {
  it("events list --task: names the app's tasks (with a suggestion), or with --store the tasks the latest events were handed to", async () => {
    const store = await storeWithHistory();
    try {
      const withApp = capture();
      expect(await events(store, store.history, parseEventsArgs(["list", "--task", "recieve", "app.yaml"], NOW), withApp, TASKS)).to.equal(0);
      expect(withApp.stdout.join("\n")).to.contain("no events match");
      expect(withApp.stderr).to.deep.equal(['this app has no task "recieve" (did you mean "receive"?); its tasks: receive, pack']);
      const withStore = capture();
      await events(store, store.history, parseEventsArgs(["list", "--task", "shipping", "--store", "/d"], NOW), withStore);
      expect(withStore.stderr).to.deep.equal(['no event was handed to a task "shipping"; the latest events were handed to: receive']);
      // A known task whose events are outside the other filters: no hint.
      const known = capture();
      await events(store, store.history, parseEventsArgs(["list", "--task", "pack", "app.yaml"], NOW), known, TASKS);
      await events(store, store.history, parseEventsArgs(["list", "--task", "receive", "--status", "dead", "--store", "/d"], NOW), known);
      expect(known.stderr).to.deep.equal([]);
      // A bulk replay that matched nothing says the same.
      const replay = capture();
      await events(store, store.history, parseEventsArgs(["replay", "--status", "dead", "--task", "pakc", "app.yaml"], NOW), replay, TASKS);
      expect(replay.stderr).to.deep.equal(['this app has no task "pakc" (did you mean "pack"?); its tasks: receive, pack']);
    } finally {
      await store.close();
    }
  });

  it("dead-letters list --queue: names the known queues, and a task's queue when given the task's name", async () => {
    const store = await storeWithHistory();
    try {
      const typo = capture();
      expect(await deadLetters(store, parseDeadLetterArgs(["list", "--queue", "parcel", "app.yaml"]), typo, TASKS)).to.equal(0);
      expect(typo.stdout).to.deep.equal(["no dead letters"]);
      expect(typo.stderr).to.deep.equal(['this app has no queue "parcel" (did you mean "parcels"?); its queues: webhook:receive, parcels']);
      const taskName = capture();
      await deadLetters(store, parseDeadLetterArgs(["list", "--queue", "receive", "app.yaml"]), taskName, TASKS);
      expect(taskName.stderr).to.deep.equal(['this app has no queue "receive" (task "receive" reads queue "webhook:receive"); its queues: webhook:receive, parcels']);
      const withStore = capture();
      await deadLetters(store, parseDeadLetterArgs(["purge", "--all", "--queue", "orders", "--store", "/d"]), withStore);
      expect(withStore.stdout).to.deep.equal(["purged 0 dead letters"]);
      expect(withStore.stderr).to.deep.equal(['the store holds nothing in a queue "orders"; the queues holding messages or dead letters: webhook:receive']);
      // A queue of the app with no dead letters: nothing to add.
      const empty = capture();
      await deadLetters(store, parseDeadLetterArgs(["list", "--queue", "parcels", "app.yaml"]), empty, TASKS);
      expect(empty.stderr).to.deep.equal([]);
    } finally {
      await store.close();
    }
  });
});
