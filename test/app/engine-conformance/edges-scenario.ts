import { CoreApp, PermanentError, WebhookSource, type WebhookEvent } from "../../../src/index";
import { send } from "../../helpers/http-client";
import { until } from "../../helpers/wait";
import { Labels, outcome } from "./normalize";
import type { Observation } from "./scenario";

type Body = { n: number; fail?: boolean };

/**
 * Edges of the same API on one engine: a value emitted to a queue no task consumes, cursors
 * reused with another query, empty windows, odd limits, dead letters by queue, replays by
 * filter with a task or an unrouted status, and the app's status.
 */
export async function runEdgesScenario(app: CoreApp): Promise<Observation> {
  const labels = new Labels();
  const seen: Observation = {};
  const hooks = new WebhookSource({ path: "/edges", host: "127.0.0.1", port: 0, eventName: (e) => e.headers["x-event"] });
  app.task<WebhookEvent<Body>>({ source: hooks, name: "main", on: "a.*", emit: "nobody" }, async (_ctx, event) => {
    if (event.body.fail === true) throw new PermanentError(`bad ${event.body.n}`);
    return { n: event.body.n };
  });
  app.task<WebhookEvent<Body>>({ source: hooks, name: "late", on: "b" }, async () => undefined);
  await app.start();
  const ids: string[] = [];
  const post = async (label: string, body: Body, name: string) => {
    const reply = await send(hooks.url, { body: JSON.stringify(body), headers: { "content-type": "application/json", "x-event": name } });
    const id = reply.json<{ id?: string }>().id;
    seen[`answer ${label}`] = labels.normalize(reply.json());
    // An unrouted event's answer may not name it: found by the list below.
    if (id !== undefined) {
      labels.name(id, label);
      await app.events.get(id);
    }
    ids.push(id ?? "");
    await until(async () => (await app.events.list({ limit: 500 })).events.every((e) => e.deliveries.every((d) => d.status !== "pending" && d.status !== "failed")));
    await new Promise((r) => setTimeout(r, 3));
  };
  await post("a1", { n: 1 }, "a.x");
  await post("a2", { n: 2, fail: true }, "a.y");
  await post("c3", { n: 3 }, "c");
  await post("a4", { n: 4 }, "a.x");
  await post("b5", { n: 5 }, "b");
  await post("a6", { n: 6, fail: true }, "a.z");

  seen["list"] = labels.normalize(await app.events.list({ limit: 500 }));
  seen["pending"] = labels.normalize(await app.events.list({ status: "pending" }));
  seen["pending main"] = labels.normalize(await app.events.list({ status: "pending", task: "main" }));
  seen["source nobody"] = labels.normalize(await app.events.list({ source: "nobody" }));
  const first = await app.events.list({ limit: 2 });
  const calls: Record<string, () => Promise<unknown>> = {
    "cursor reused with a status": () => app.events.list({ limit: 2, status: "dead", cursor: first.next }),
    "cursor reused with a task": () => app.events.list({ limit: 10, task: "late", cursor: first.next }),
    "cursor reused with since": () => app.events.list({ since: Date.now() + 60_000, cursor: first.next }),
    "since = until": () => app.events.list({ since: first.events[0]!.receivedAt, until: first.events[0]!.receivedAt }),
    "until in the past": () => app.events.list({ until: 1 }),
    "since 0": async () => (await app.events.list({ since: 0 })).events.length,
    "limit 500": async () => (await app.events.list({ limit: 500 })).events.length,
    "limit 1.5": () => app.events.list({ limit: 1.5 }),
    "limit string": () => app.events.list({ limit: "2" as never }),
    "since string": () => app.events.list({ since: "0" as never }),
    "search empty": () => app.events.list({ search: "" }),
    "source empty": () => app.events.list({ source: "" }),
    "status unrouted task": () => app.events.list({ status: "unrouted", task: "main" }),
    "get empty": () => app.events.get(""),
    "dead letters of queue": async () => (await app.deadLetters.list("webhook:main")).map((l) => l.message.id),
    "dead letters of other queue": async () => (await app.deadLetters.list("webhook:late")).length,
    "dead letters of unknown queue": async () => (await app.deadLetters.list("nope")).length,
    "dead letter get": async () => (await app.deadLetters.get(ids[1]!))?.error,
    "replay filter dry, task late": () => app.events.replay({ source: "edges" }, { task: "late", dryRun: true }),
    "replay filter dry, task main, status dead": () => app.events.replay({ status: "dead" }, { task: "main", dryRun: true }),
    "replay filter dry, unrouted": () => app.events.replay({ status: "unrouted" }, { dryRun: true }),
    "replay filter unrouted": () => app.events.replay({ status: "unrouted" }, { ratePerSecond: 1000 }),
    "replay filter, source of a queue": () => app.events.replay({ source: "nobody" }, { dryRun: true }),
    "replay filter, task with other source": () => app.events.replay({ source: "other" }, { task: "main", dryRun: true }),
    "replay bad rate": () => app.events.replay({ status: "dead" }, { ratePerSecond: 0 }),
    "replay one with dryRun": () => app.events.replay(ids[0]!, { dryRun: true } as never),
    "replay queue value no consumer": async () => app.events.replay((await app.events.get(ids[0]!))!.children[0]!),
    "purge of queue": () => app.deadLetters.purge({ queue: "webhook:main" }),
    "purge again": () => app.deadLetters.purge({ queue: "webhook:main" }),
  };
  for (const [name, call] of Object.entries(calls)) seen[name] = await outcome(labels, call);
  // The console overview's counts per task and source (one bucket: the engines run a moment apart).
  const activity = await app.store.history!.activity(Date.now() - 3_600_000, 100 * 365 * 86_400_000);
  seen["activity"] = labels.normalize([...activity].sort((a, b) => (a.task + (a.source ?? "") < b.task + (b.source ?? "") ? -1 : 1)));
  seen["size"] = (await app.store.history!.size()).events;
  const status = await app.status();
  seen["status"] = labels.normalize(JSON.parse(JSON.stringify(status, (key, value: unknown) => (key.startsWith("oldestAge") || key.startsWith("uptime") ? "<age>" : value))));
  return seen;
}
