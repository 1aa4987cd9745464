import { CoreApp, WebhookSource, type WebhookEvent } from "../../../src/index";
import { send } from "../../helpers/http-client";
import { until } from "../../helpers/wait";
import { Labels } from "./normalize";
import type { Observation } from "./scenario";

type Body = { n: number; key: string };

/**
 * Runs that end other than by returning or throwing: a debounced burst (its older events
 * `superseded`), a batch, a run past its timeout; as the history shows them.
 */
export async function runFlowScenario(app: CoreApp): Promise<Observation> {
  const labels = new Labels();
  const seen: Observation = {};
  const source = (path: string) => new WebhookSource({ path, host: "127.0.0.1", port: 0 });
  const bounce = source("/bounce");
  const batch = source("/batch");
  const slow = source("/slow");
  const batches: number[][] = [];
  app.task<WebhookEvent<Body>>({ source: bounce, name: "bounce", debounce: { periodMs: 300, key: (e) => e.body.key } }, async () => undefined);
  app.task<WebhookEvent<Body>>({ source: batch, name: "batch", batch: { maxSize: 3, maxWaitMs: 300 } }, async (_ctx, events) => void batches.push(events.map((e) => e.body.n)));
  app.task<WebhookEvent<Body>>({ source: slow, name: "slow", timeoutMs: 50, retry: { attempts: 2, initialDelayMs: 10 } }, () => new Promise<void>((r) => setTimeout(r, 300)));
  await app.start();
  const ids: string[] = [];
  const post = async (label: string, hook: WebhookSource, body: Body) => {
    const id = (await send(hook.url, { body: JSON.stringify(body), headers: { "content-type": "application/json" } })).json<{ id: string }>().id;
    labels.name(id, label);
    ids.push(id);
    await new Promise((r) => setTimeout(r, 3));
  };
  await post("d1", bounce, { n: 1, key: "k" });
  await post("d2", bounce, { n: 2, key: "k" });
  await post("d3", bounce, { n: 3, key: "other" });
  await post("d4", bounce, { n: 4, key: "k" });
  for (const n of [5, 6, 7]) await post(`b${n}`, batch, { n, key: "b" });
  await post("s8", slow, { n: 8, key: "s" });
  await until(async () => {
    for (const id of ids) {
      const event = await app.events.get(id);
      if (event === undefined || event.status === "pending" || event.status === "failed") return false;
    }
    return true;
  }, 15_000);
  for (const id of ids) {
    const event = (await app.events.get(id))!;
    seen[`get ${labels.label(id)}`] = labels.normalize({ status: event.status, deliveries: event.deliveries, runs: event.runs.map((r) => ({ ...r, error: r.error === undefined ? undefined : { type: r.error.type, message: r.error.message } })) });
  }
  seen["list"] = labels.normalize((await app.events.list()).events.map((e) => [e.id, e.status]));
  seen["dead letters"] = labels.normalize((await app.deadLetters.list()).map((l) => [l.message.id, l.task, l.error, l.attempts]));
  seen["batches"] = batches;
  return seen;
}
