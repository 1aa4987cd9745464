import { FLOW_RECORDS_NAMESPACE, recordTaskFlows } from "../../src/app/flow/flow-record";
import { expect } from "chai";
import { main } from "../../src/cli/main";
import { historyOf, operate, refuseWithoutHistory } from "../../src/cli/events-command";
import { MemoryStore } from "../../src/store/memory/memory-store";
import type { AppStoreTarget } from "../../src/cli/app-store";
import { parseEventsArgs } from "../../src/cli/events-args";
import { parseTimeFlag } from "../../src/cli/time-flag";
import type { Output } from "../../src/cli/output";

function capture(): Output & { outLines: string[]; errLines: string[] } {
  const outLines: string[] = [];
  const errLines: string[] = [];
  return { outLines, errLines, out: (l) => void outLines.push(l), err: (l) => void errLines.push(l) };
}

const NOW = Date.parse("2026-11-25T12:00:00Z");
const CURSOR = Buffer.from(JSON.stringify([NOW, "evt-9"])).toString("base64url");

describe("CLI events: flags", () => {
  it("list takes every filter of the history's query, times as ISO or spans before now", () => {
    const request = parseEventsArgs(
      ["list", "--source", "orders", "--task", "invoice", "--status", "dead", "--since", "2d", "--until", "2026-11-25T11:00:00Z", "--search", "repository.full_name=octo/repo", "--limit", "20", "--cursor", CURSOR, "--json", "--store", "/data"],
      NOW,
    );
    expect(request).to.deep.equal({
      action: "list",
      query: { source: "orders", task: "invoice", status: "dead", since: NOW - 2 * 86_400_000, until: Date.parse("2026-11-25T11:00:00Z"), search: "repository.full_name=octo/repo", limit: 20, cursor: CURSOR },
      json: true,
      app: { store: "/data" },
    });
  });

  it("time flags: spans in s, m, h, d, w; ISO dates and times; anything else refused", () => {
    expect(parseTimeFlag("since", "90s", NOW)).to.equal(NOW - 90_000);
    expect(parseTimeFlag("since", "30m", NOW)).to.equal(NOW - 1_800_000);
    expect(parseTimeFlag("since", "1h", NOW)).to.equal(NOW - 3_600_000);
    expect(parseTimeFlag("since", "1.5d", NOW)).to.equal(NOW - 129_600_000);
    expect(parseTimeFlag("since", "1w", NOW)).to.equal(NOW - 604_800_000);
    expect(parseTimeFlag("since", "2026-11-24", NOW)).to.equal(Date.parse("2026-11-24T00:00:00Z"));
    expect(parseTimeFlag("since", "2028-02-29", NOW)).to.equal(Date.UTC(2028, 1, 29));
    expect(parseTimeFlag("since", "2026-11-24T18:30:00+01:00", NOW)).to.equal(Date.parse("2026-11-24T17:30:00Z"));
    for (const bad of ["yesterday", "1y", "-1h", "h", "2026-13-45", "2026-02-30", "2025-02-29T10:00Z", "2026-04-31", "12:00", ""]) {
      expect(() => parseTimeFlag("since", bad, NOW), bad).to.throw(/--since .*ISO time/);
    }
  });

  it("replay: one event by id (with --task), or a filter in bulk with --dry-run and --rate", () => {
    expect(parseEventsArgs(["replay", "evt-1", "--task", "invoice", "worker.yaml"], NOW)).to.deep.equal({ action: "replay", id: "evt-1", task: "invoice", json: false, app: { yaml: "worker.yaml" } });
    expect(parseEventsArgs(["replay", "evt-1", "--store", "postgres://db/x"], NOW)).to.deep.include({ action: "replay", id: "evt-1", app: { store: "postgres://db/x" } });
    expect(parseEventsArgs(["replay", "--status", "dead", "--since", "1d", "--task", "t", "--dry-run", "--rate", "20", "--store", "/d"], NOW)).to.deep.equal({
      action: "bulk-replay",
      filter: { status: "dead", since: NOW - 86_400_000, task: "t" },
      task: "t",
      dryRun: true,
      ratePerSecond: 20,
      json: false,
      app: { store: "/d" },
    });
  });

  describe("every bad command line is refused with exit code 2 and a message naming the problem", () => {
    const cases: Array<[string[], RegExp]> = [
      [["events"], /events needs an action: list, show, replay/],
      [["events", "purge", "--store", "/d"], /unknown events action "purge"/],
      [["events", "lsit", "--store", "/d"], /unknown events action "lsit" \(did you mean "list"\?\); one of: list, show, replay/],
      [["dead-letters", "lst", "--store", "/d"], /unknown dead-letters action "lst" \(did you mean "list"\?\); one of: list, show, replay, purge/],
      [["events", "list", "--status", "lost", "--store", "/d"], /--status "lost": one of pending, succeeded, failed, dead/],
      [["events", "list", "--since", "yesterday", "--store", "/d"], /--since "yesterday": give an ISO time/],
      [["events", "list", "--until", "soon", "--store", "/d"], /--until "soon"/],
      [["events", "list", "--since", "1h", "--until", "2h", "--store", "/d"], /--since 1h is not before --until 2h/],
      [["events", "list", "--limit", "0", "--store", "/d"], /--limit "0": a whole number from 1 to 500/],
      [["events", "list", "--limit", "501", "--store", "/d"], /--limit "501"/],
      [["events", "list", "--limit", "ten", "--store", "/d"], /--limit "ten"/],
      [["events", "list", "--search", "", "--store", "/d"], /--search must not be empty/],
      [["events", "list", "--cursor", "page-2", "--store", "/d"], /--cursor "page-2" is not one this history gave/],
      [["events", "list", "--dry-run", "--store", "/d"], /--dry-run does not apply to events list/],
      [["events", "list", "--rate", "5", "--store", "/d"], /--rate does not apply to events list/],
      [["events", "list", "--bogus", "--store", "/d"], /^error: unknown option "--bogus" for events; its options: --module, --store, --source, --task/],
      [["events", "list", "--sorce", "x", "--store", "/d"], /^error: unknown option "--sorce" for events \(did you mean "--source"\?\)/],
      [["events", "list"], /usage: events list/],
      [["events", "list", "--store", "/d", "--module", "app.js"], /give --module or --store, not both/],
      [["events", "show", "--store", "/d"], /usage: events show <id>/],
      [["events", "show", "e1", "--status", "dead", "--store", "/d"], /--status does not apply to events show/],
      [["events", "show", "e1", "--limit", "5", "--store", "/d"], /--limit does not apply to events show/],
      [["events", "replay", "--store", "/d"], /events replay needs an event id, or a filter/],
      [["events", "replay", "--task", "t", "--store", "/d"], /--task alone would replay every event of the task/],
      [["events", "replay", "e1", "--status", "dead", "--store", "/d"], /give an event id or a filter \(--status\), not both/],
      [["events", "replay", "e1", "--dry-run", "--store", "/d"], /--dry-run does not apply to events replay of one event/],
      [["events", "replay", "--status", "dead", "--rate", "0", "--store", "/d"], /--rate "0": a number above 0/],
      [["events", "replay", "--status", "dead", "--rate", "fast", "--store", "/d"], /--rate "fast"/],
      [["events", "replay", "--status", "dead", "--cursor", "x", "--store", "/d"], /--cursor does not apply to events replay/],
    ];
    for (const [args, message] of cases) {
      it(args.join(" "), async () => {
        const output = capture();
        expect(await main(args, output)).to.equal(2);
        expect(output.errLines[0]).to.match(message);
        expect(output.errLines[1]).to.equal("Run 'webhook-tasks --help' for usage.");
        expect(output.outLines).to.deep.equal([]);
      });
    }
  });

  it("--help lists the events commands and their flags", async () => {
    const output = capture();
    expect(await main(["events", "--help"], output)).to.equal(0);
    const help = output.outLines.join("\n");
    for (const part of ["events list <app>", "events show <id> <app>", "events replay <id> <app>", "events replay <filter> <app>", "--dry-run", "--rate <n>", "--cursor <cursor>", "--search <text>"]) {
      expect(help).to.contain(part);
    }
  });

  it("refuses a store whose engine keeps no history, an app with history: false, and the memory store, before reading anything", () => {
    const target: AppStoreTarget = { appName: undefined, label: "store /srv/data", store: "embedded", dataDir: "/srv/data", maxQueued: undefined, maxBytes: undefined, tasks: undefined };
    expect(() => historyOf({ engine: "custom", history: undefined }, target)).to.throw("store /srv/data: its custom store at /srv/data keeps no event history");
    expect(() => refuseWithoutHistory({ ...target, label: 'app "shop"', appName: "shop", historyOff: true })).to.throw('app "shop" has its event history off (history: false)');
    expect(() => refuseWithoutHistory({ ...target, label: 'app "shop"', appName: "shop", store: "memory" })).to.throw('app "shop" uses the memory store: its event history lives only inside the running process');
    expect(() => refuseWithoutHistory(target)).not.to.throw();
  });
  it("replays, with the app known, only to tasks the app still has: none left is refused, and nothing is queued for a removed task", async () => {
    const store = new MemoryStore();
    await store.open();
    try {
      store.history.noteEvent({
        id: "e1",
        origin: { kind: "webhook", source: "orders" },
        receivedAt: NOW,
        deliveries: [
          { task: "kept", queue: "webhook:kept", messageId: "e1@kept" },
          { task: "removed", queue: "webhook:removed", messageId: "e1@removed" },
        ],
        payload: { body: { n: 1 }, headers: {} },
      });
      await store.history.flush();
      const tasks = [{ name: "kept", queue: "webhook:kept", input: undefined, emit: undefined }];
      const output = capture();
      expect(await operate(store, store.history, parseEventsArgs(["replay", "e1", "--json", "app.yaml"], NOW), output, tasks)).to.equal(0);
      expect((JSON.parse(output.outLines[0]) as { tasks: string[] }).tasks).to.deep.equal(["kept"]);
      let refused: Error | undefined;
      try {
        await operate(store, store.history, parseEventsArgs(["replay", "e1", "--task", "removed", "app.yaml"], NOW), capture(), tasks);
      } catch (error) {
        refused = error as Error;
      }
      expect(refused?.message).to.match(/cannot replay event "e1": task "removed" is not a task of this app \(its tasks: kept\)/);
      expect(await store.depth("webhook:kept")).to.equal(1);
      expect(await store.depth("webhook:removed")).to.equal(0);
    } finally {
      await store.close();
    }
  });
  it("replays an unrouted event, with the app known, only to a task of the app on a webhook source that the history saw on the event's source", async () => {
    const store = new MemoryStore();
    await store.open();
    try {
      store.history.noteEvent({ id: "seen", origin: { kind: "webhook", source: "orders" }, receivedAt: NOW, deliveries: [{ task: "ship", queue: "webhook:ship", messageId: "seen" }], payload: { body: {}, headers: {} } });
      store.history.noteEvent({ id: "lost", origin: { kind: "webhook", source: "orders" }, receivedAt: NOW + 1, deliveries: [], payload: { body: { n: 2 }, headers: {} } });
      await store.history.flush();
      const tasks = [
        { name: "ship", queue: "webhook:ship", input: undefined, emit: undefined },
        { name: "fresh", queue: "webhook:fresh", input: undefined, emit: undefined },
        { name: "consume", queue: "jobs", input: "jobs", emit: undefined },
      ];
      const refusal = async (args: string[]): Promise<string | undefined> => {
        try {
          await operate(store, store.history, parseEventsArgs(args, NOW), capture(), tasks);
        } catch (error) {
          return (error as Error).message;
        }
        return undefined;
      };
      expect(await refusal(["replay", "lost", "--task", "consume", "app.yaml"])).to.equal('cannot replay event "lost" to task "consume": this app has no such task on a webhook source (its webhook tasks: ship, fresh)');
      // A task of the app, but never seen on source "orders": it may be on another source.
      expect(await refusal(["replay", "lost", "--task", "fresh", "app.yaml"])).to.match(/^cannot replay event "lost" to task "fresh": the history holds no event of source "orders" handed to "fresh"/);
      expect(await refusal(["replay", "lost", "app.yaml"])).to.match(/^cannot replay event "lost": it was unrouted \(no task took it\); name the task to send it to with --task/);
      expect(await store.depth("webhook:fresh")).to.equal(0);
      const output = capture();
      expect(await operate(store, store.history, parseEventsArgs(["replay", "lost", "--task", "ship", "--json", "app.yaml"], NOW), output, tasks)).to.equal(0);
      expect((JSON.parse(output.outLines[0]) as { tasks: string[] }).tasks).to.deep.equal(["ship"]);
      expect(await store.depth("webhook:ship")).to.equal(1);
    } finally {
      await store.close();
    }
  });

  it("replays by status only the deliveries in that status: a task that succeeded does not get the event again", async () => {
    const store = new MemoryStore();
    await store.open();
    try {
      store.history.noteEvent({
        id: "e2",
        origin: { kind: "webhook", source: "orders" },
        receivedAt: NOW,
        deliveries: [
          { task: "notify", queue: "webhook:notify", messageId: "e2@notify" },
          { task: "record", queue: "webhook:record", messageId: "e2@record" },
        ],
        payload: { body: { n: 2 }, headers: {} },
      });
      const run = { attempt: 1, startedAt: NOW, durationMs: 1 };
      store.history.noteRun({ eventId: "e2", run: { ...run, task: "notify", outcome: "success" }, status: "succeeded" });
      store.history.noteRun({ eventId: "e2", run: { ...run, task: "record", outcome: "dead_letter", error: { type: "Error", message: "down" } }, status: "dead" });
      await store.history.flush();
      // The dead delivery's letter, as the app leaves it (a replay by status dead replays the letters still held).
      await store.enqueue("webhook:record", { id: "e2@record", payload: { body: { n: 2 }, headers: {} }, attempts: 0, enqueuedAt: NOW });
      const [letter] = await store.claim("webhook:record", 1);
      await store.deadLetter({ queue: "webhook:record", task: "record", message: letter, error: "down", attempts: 1, diedAt: NOW });
      // As the app notes its tasks' (here: no) flow limits when it starts: --store replays only into tasks so noted.
      await recordTaskFlows(store.state(FLOW_RECORDS_NAMESPACE), [{ name: "notify", queue: "webhook:notify", flow: undefined }, { name: "record", queue: "webhook:record", flow: undefined }]);
      const output = capture();
      expect(await operate(store, store.history, parseEventsArgs(["replay", "--status", "dead", "--json", "--store", "/d"], NOW), output)).to.equal(0);
      expect(JSON.parse(output.outLines[0])).to.deep.equal({ matched: 1, queued: 1, dryRun: false });
      expect(await store.depth("webhook:record")).to.equal(1);
      expect(await store.depth("webhook:notify")).to.equal(0);
    } finally {
      await store.close();
    }
  });
});
