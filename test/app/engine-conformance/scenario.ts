import { CoreApp, PermanentError, WebhookSource, type WebhookEvent } from "../../../src/index";
import type { HistoryEvent, HistoryQuery } from "../../../src/store/history";
import { send } from "../../helpers/http-client";
import { until } from "../../helpers/wait";
import { Labels, outcome } from "./normalize";

type Body = { n: number; chain?: boolean; k?: string; [key: string]: unknown };

/** Everything the scenario saw, by step; compared across engines. */
export type Observation = Record<string, unknown>;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * One app on one engine, driven through the public API only: a source fanned out to tasks
 * selected by `on`, one failing with retries to a dead letter, one failing permanently, an emit
 * chain A -> B -> C, an unrouted event, ordering keys, a pause and a resume, replays one by
 * one and by filter, searches, time windows and pages. Returns what a user would have seen.
 */
export async function runScenario(app: CoreApp): Promise<Observation> {
  const labels = new Labels();
  const seen: Observation = {};
  const order: string[] = [];
  const hooks = new WebhookSource({ path: "/hooks", host: "127.0.0.1", port: 0, eventName: (e) => e.headers["x-event"] });
  const picky = new WebhookSource({ path: "/picky", host: "127.0.0.1", port: 0, eventName: (e) => e.headers["x-event"] });
  const ordered = new WebhookSource({ path: "/ordered", host: "127.0.0.1", port: 0 });
  const orderedRuns: number[] = [];
  // Each step of the chain a few milliseconds after the last: events received in one millisecond
  // are listed by id, and emitted ids are random, so the list's order would differ between runs.
  const later = () => new Promise((resolve) => setTimeout(resolve, 3));
  app.task<WebhookEvent<Body>>({ source: hooks, name: "record", emit: "stage-b" }, async (_ctx, event) => {
    if (event.body.chain !== true) return undefined;
    await later();
    return { step: "b", n: event.body.n };
  });
  app.task<WebhookEvent<Body>>({ source: hooks, name: "notify", on: "order.*" }, async () => undefined);
  app.task<WebhookEvent<Body>>({ source: hooks, name: "flaky", on: "order.paid", retry: { attempts: 2, initialDelayMs: 20, factor: 1, maxDelayMs: 20 } }, async (_ctx, event) => {
    throw new Error(`flaky ${event.body.n}`);
  });
  app.task<WebhookEvent<Body>>({ source: hooks, name: "perm", on: "order.refund" }, async () => {
    throw new PermanentError("no refunds");
  });
  app.task<{ step: string; n: number }>({ source: "stage-b", name: "stepB", emit: "stage-c" }, async (_ctx, value) => {
    await later();
    return { step: "c", n: value.n };
  });
  const stepC: unknown[] = [];
  app.task<{ step: string; n: number }>({ source: "stage-c", name: "stepC" }, async (ctx, value) => {
    // Labelled at the end: this may run before the replay that made it has answered.
    stepC.push({ eventId: ctx.eventId, attempt: ctx.attempt, value });
  });
  app.task({ source: picky, name: "picky", on: "x.y" }, async () => undefined);
  app.task<WebhookEvent<Body>>({ source: ordered, name: "ordered", orderingKey: (e) => e.body.k }, async (_ctx, event) => {
    orderedRuns.push(event.body.n);
    await sleep(5);
  });
  await app.start();

  const settled = async (id?: string) => {
    // The history is written in the background (docs/history.md): get() of a just-answered id waits for it.
    if (id !== undefined) await app.events.get(id);
    await until(async () => {
      const page = await app.events.list({ limit: 500 });
      return page.events.every((e) => e.status !== "pending" && e.status !== "failed" || e.deliveries.length === 0 && e.status === "pending");
    }, 10_000);
  };
  const post = async (label: string, source: WebhookSource, body: unknown, headers: Record<string, string> = {}, query = "", settle = true): Promise<string> => {
    const reply = await send(source.url + query, { body: JSON.stringify(body), headers: { "content-type": "application/json", ...headers } });
    const id = reply.json<{ id: string }>().id;
    labels.name(id, label);
    order.push(id);
    seen[`answer ${label}`] = labels.normalize({ status: reply.status, body: reply.json() });
    // Each settled before the next, apart in time: every engine then orders them alike.
    if (settle) await settled(id);
    await sleep(3);
    return id;
  };

  const e1 = await post("e1", hooks, { n: 1, a: { b: "c" }, z: 1, y: 2 }, { "x-event": "order.created", "x-delivery": "d-1", authorization: "Bearer s3cret", "x-api-key": "k1", cookie: "c=1", "idempotency-key": "idem-1" });
  const e2 = await post("e2", hooks, { n: 2, a: { b: "d" }, chain: true }, { "x-event": "order.paid", "x-delivery": "d-2" });
  const e3 = await post("e3", hooks, { n: 3, amount: 4200.0 }, { "x-event": "order.refund" });
  await post("e4", hooks, { n: 4, chain: true }, { "x-event": "push" });
  await post("e5", picky, { n: 5 }, { "x-event": "z" });
  await post("e6", ordered, { k: "a", n: 6 });
  await post("e7", ordered, { k: "a", n: 7 });
  await post("e8", ordered, { k: "b", n: 8 });
  await post("e9", hooks, { n: 9 }, { "x-event": "ping" }, "?token=abc&x=1&x=2");
  await settled();
  seen["ordered runs"] = orderedRuns.filter((n) => n !== 8);

  // Pause and resume.
  await app.pause("notify");
  seen["paused"] = [...(await app.paused())];
  const e10 = await post("e10", hooks, { n: 10 }, { "x-event": "order.created" }, "", false);
  await until(async () => (await app.events.get(e10))?.deliveries.find((d) => d.task === "record")?.status === "succeeded");
  await sleep(50);
  seen["while paused"] = labels.normalize(await app.events.list({ task: "notify", status: "pending" }));
  seen["e10 while paused"] = labels.normalize(await app.events.get(e10));
  await app.resume("notify");
  seen["resumed"] = [...(await app.paused())];
  await settled();

  // Everything as listed and as got.
  seen["list all"] = labels.normalize(await app.events.list({ limit: 500 }));
  const all = (await app.events.list({ limit: 500 })).events.map((e) => e.id);
  for (const id of all) seen[`get ${labels.label(id)}`] = labels.normalize(byTask(await app.events.get(id)));
  seen["dead letters"] = labels.normalize(await app.deadLetters.list());

  const queries: Record<string, HistoryQuery> = {
    "task flaky": { task: "flaky" },
    "task stepB": { task: "stepB" },
    "status dead": { status: "dead" },
    "status failed": { status: "failed" },
    "status pending": { status: "pending" },
    "status succeeded": { status: "succeeded" },
    "status unrouted": { status: "unrouted" },
    "task notify succeeded": { task: "notify", status: "succeeded" },
    "task picky unrouted": { task: "picky", status: "unrouted" },
    "source hooks": { source: "hooks" },
    "source ordered": { source: "ordered" },
    "source stage-b": { source: "stage-b" },
    "search header": { search: "d-1" },
    "search idempotency": { search: "idem-1" },
    "search redacted header": { search: "k1" },
    "search redacted placeholder": { search: "[redacted]" },
    "search cookie": { search: "c=1" },
    "search field": { search: "a.b=c" },
    "search field miss": { search: "a.b=x" },
    "search number": { search: "amount=4200" },
    "search number text": { search: "amount=4.2e3" },
    "search bool": { search: "chain=true" },
    "search object": { search: "a={\"b\":\"c\"}" },
    "search id": { search: e1 },
    "search query param": { search: "abc" },
    "search event name": { search: "order.created" },
    "search spaces": { search: " d-1 " },
    "search empty value": { search: "a.b=" },
  };
  for (const [name, query] of Object.entries(queries)) seen[`list ${name}`] = await outcome(labels, () => app.events.list(query));

  // Time windows: since inclusive, until exclusive.
  const times = new Map((await app.events.list({ limit: 500 })).events.map((e) => [e.id, e.receivedAt]));
  seen["window e3..e6"] = await outcome(labels, () => app.events.list({ since: times.get(e3)!, until: times.get(order[5])! }));
  seen["window until e1"] = await outcome(labels, () => app.events.list({ until: times.get(e1)! }));
  seen["window since last"] = await outcome(labels, () => app.events.list({ since: times.get(e10)! }));

  // Pages at and around their boundaries.
  const total = all.length;
  for (const limit of [1, 3, total - 1, total, total + 1]) seen[`pages of ${limit}`] = await pages(labels, app, { limit });
  seen["pages of 2, task notify"] = await pages(labels, app, { task: "notify", limit: 2 });
  seen["pages of 2, status dead"] = await pages(labels, app, { status: "dead", limit: 2 });
  seen["pages of 1, search none"] = await pages(labels, app, { search: "nothing-here", limit: 1 });

  // Refusals.
  const bad: Record<string, () => Promise<unknown>> = {
    "list status": () => app.events.list({ status: "bogus" as never }),
    "list limit 0": () => app.events.list({ limit: 0 }),
    "list limit 501": () => app.events.list({ limit: 501 }),
    "list cursor": () => app.events.list({ cursor: "garbage" }),
    "list since NaN": () => app.events.list({ since: Number.NaN }),
    "list since>until": () => app.events.list({ since: 10, until: 5 }),
    "list unknown key": () => app.events.list({ stauts: "dead" } as never),
    "get unknown": () => app.events.get("nope"),
    "get uuid unknown": () => app.events.get("00000000-0000-7000-8000-000000000000"),
    "replay unknown": () => app.events.replay("nope"),
    "replay unknown task": () => app.events.replay(e1, { task: "notfy" }),
    "replay wrong source": () => app.events.replay(e1, { task: "stepB" }),
    "pause unknown": () => app.pause("nobody"),
    "resume unknown": () => app.resume("nobody"),
    "dead letter get unknown": () => app.deadLetters.get("nope"),
    "dead letter replay unknown": () => app.deadLetters.replay("nope"),
    "dead letter purge unknown": () => app.deadLetters.purge({ id: "nope" }),
  };
  for (const [name, call] of Object.entries(bad)) seen[`refuse ${name}`] = await outcome(labels, call);

  // Replays: one, one to a task, by filter (dry run first).
  seen["replay e3"] = await outcome(labels, () => app.events.replay(e3));
  seen["replay e2 to notify"] = await outcome(labels, () => app.events.replay(e2, { task: "notify" }));
  seen["replay unrouted e5"] = await outcome(labels, () => app.events.replay(order[4]));
  seen["replay unrouted e5 to picky"] = await outcome(labels, () => app.events.replay(order[4], { task: "picky" }));
  seen["replay emitted"] = await outcome(labels, async () => {
    const child = (await app.events.get(e2))!.children[0]!;
    return app.events.replay(child);
  });
  await settled();
  seen["stepC received"] = labels.normalize(stepC);
  seen["dry run dead"] = await outcome(labels, () => app.events.replay({ status: "dead" }, { dryRun: true }));
  seen["dry run search"] = await outcome(labels, () => app.events.replay({ search: "a.b=c" }, { dryRun: true }));
  seen["dry run limit"] = await outcome(labels, () => app.events.replay({ status: "dead", limit: 1 } as never, { dryRun: true }));
  const until1 = Date.now();
  await sleep(2);
  seen["bulk dead"] = await outcome(labels, () => app.events.replay({ status: "dead", until: until1 }, { ratePerSecond: 1000 }));
  await settled();
  // The replays a bulk replay made, labelled in the order received (their runs end in any order).
  for (const event of [...(await app.events.list({ limit: 500 })).events].reverse()) labels.label(event.id);
  seen["bulk dead again, dry"] = await outcome(labels, () => app.events.replay({ status: "dead", until: until1 }, { dryRun: true }));
  // Oldest first by the time each died, which is chance among replays running at once: by id here.
  const letterIds = async () => (await app.deadLetters.list()).map((l) => labels.normalize(l.message.id) as string).sort();
  seen["dead letters after"] = await letterIds();
  const letter = (await app.deadLetters.list()).find((l) => l.task === "perm");
  const letters = (await app.deadLetters.list()).length;
  seen["dead letter replay"] = await outcome(labels, () => app.deadLetters.replay(letter!.message.id));
  // Its delivery stays dead in the history while it runs again (the same message, put back): wait for the run.
  await until(async () => (await app.events.get(e3))!.deliveries.find((d) => d.task === "perm")!.attempts === 2 && (await app.deadLetters.list()).length === letters, 10_000);
  await settled();
  seen["dead letters end"] = await letterIds();
  seen["end list"] = labels.normalize(await app.events.list({ limit: 500 }));
  for (const id of (await app.events.list({ limit: 500 })).events.map((e) => e.id)) seen[`end get ${labels.label(id)}`] = labels.normalize(byTask(await app.events.get(id)));
  return seen;
}

/**
 * The event with its runs by task, then attempt: runs of several tasks on one event run at once,
 * and which ends first is chance (the order across tasks is not compared; within a task it is).
 */
function byTask(event: HistoryEvent | undefined): HistoryEvent | undefined {
  if (event === undefined) return undefined;
  const tasks = event.deliveries.map((d) => d.task);
  const runs = [...event.runs].sort((a, b) => tasks.indexOf(a.task) - tasks.indexOf(b.task) || a.attempt - b.attempt);
  return { ...event, runs };
}

async function pages(labels: Labels, app: CoreApp, query: HistoryQuery): Promise<unknown> {
  const out: unknown[] = [];
  let cursor: string | undefined;
  for (let i = 0; i < 100; i++) {
    const page = await app.events.list({ ...query, cursor });
    out.push({ ids: page.events.map((e) => labels.label(e.id)), next: page.next === undefined ? "none" : "more" });
    if (page.next === undefined) return out;
    cursor = page.next;
  }
  return out;
}
