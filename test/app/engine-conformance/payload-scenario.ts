import { CoreApp, WebhookSource, type WebhookEvent } from "../../../src/index";
import { send } from "../../helpers/http-client";
import { httpRequest, rawRequest } from "../../helpers/raw-http";
import { until } from "../../helpers/wait";
import { Labels, outcome } from "./normalize";
import type { Observation } from "./scenario";
import { typed } from "./typed";

/** Requests of every kind a sender makes: what the history keeps of each, what search finds, what a replay hands the task. */
const REQUESTS: ReadonlyArray<{ label: string; type: string; body: string | Buffer; query?: string; headers?: Record<string, string> }> = [
  { label: "json order", type: "application/json", body: '{"zeta":1,"alpha":{"z":1,"a":2},"list":[3,1,2]}' },
  { label: "json numbers", type: "application/json", body: '{"f":1.0,"e":1e2,"big":12345678901234567890,"s":"4200.0"}' },
  { label: "json spaced", type: "application/json", body: '{ "a" : { "b" : "c" } , "t": true, "n": null }' },
  { label: "json unicode", type: "application/json", body: '{"name":"Zoë 🚀","esc":"\\u00e9"}' },
  { label: "json proto", type: "application/json", body: '{"__proto__":{"x":1},"constructor":"c"}' },
  { label: "json dup", type: "application/json", body: '{"a":1,"a":2}' },
  { label: "json array", type: "application/json", body: '[{"a":1},{"a":2}]' },
  { label: "json scalar", type: "application/json", body: '"just text"' },
  { label: "form", type: "application/x-www-form-urlencoded", body: "a=1&b=two&a=3&c=%F0%9F%9A%80" },
  { label: "text", type: "text/plain", body: "hello a=b" },
  { label: "bytes", type: "application/octet-stream", body: Buffer.from([0, 1, 2, 255]) },
  { label: "empty", type: "application/json", body: "" },
  { label: "query", type: "application/json", body: "{}", query: "?x=1&x=2&y=&api_key=s&key=k&sig=z&page=3" },
  { label: "headers", type: "application/json", body: "{}", headers: { "x-hub-signature-256": "sha256=abc", "x-webhook-key": "wk", "x-pass": "p", "x-session-id": "sess", "x-trace": "t-1", "x-multi": "a, b" } },
];

// Not `alpha={"a":2,"z":1}`: on PostgreSQL an object is found whatever the order of its keys (docs/history.md).
const SEARCHES = ["zeta=1", "alpha.a=2", "alpha={\"z\":1,\"a\":2}", "list=[3,1,2]", "f=1", "e=100", "s=4200", "s=4200.0",
  "a.b=c", "t=true", "n=null", "name=Zoë 🚀", "esc=é", "__proto__.x=1", "constructor=c", "a=2", "a=1", "0.a=1", "b=two", "hello a=b", "x=1", "page=3",
  "t-1", "a, b", "one, two", "one", "a=1", "b=2", "k1", "wk", "sess", "sha256=abc", "4200.0", "Zoë 🚀", "big=12345678901234567890"];

/** The same requests on one engine: each event as got, each search's hits, and what each replay delivered. */
export async function runPayloadScenario(app: CoreApp): Promise<Observation> {
  const labels = new Labels();
  const seen: Observation = {};
  const source = new WebhookSource({ path: "/in", host: "127.0.0.1", port: 0 });
  const received: unknown[] = [];
  app.task<WebhookEvent>({ source, name: "take" }, async (ctx, event) => {
    // Labelled at the end: a run may start before its 202 is read.
    received.push({ id: ctx.eventId, body: typed(event.body), query: event.query, headers: pick(event.headers), raw: ctx.rawBody.toString("hex") });
  });
  await app.start();
  const ids: string[] = [];
  for (const request of REQUESTS) {
    const reply = await send(source.url + (request.query ?? ""), { body: request.body, headers: { "content-type": request.type, ...request.headers } });
    seen[`answer ${request.label}`] = reply.status;
    const id = reply.json<{ id?: string }>().id;
    if (id === undefined) continue;
    labels.name(id, request.label);
    ids.push(id);
    await app.events.get(id);
    await new Promise((r) => setTimeout(r, 3));
  }
  // Repeated headers: Node joins most with ", " and keeps set-cookie as an array.
  const port = Number(new URL(source.url).port);
  const headers = { "Content-Type": "application/json", "X-Dup": "one", "x-dup": "two", "Set-Cookie": "a=1", "set-cookie": "b=2", "X-Kind": "k1" };
  const raw = await rawRequest(port, httpRequest("POST", "/in", headers, "{}"));
  seen["answer repeated headers"] = raw.status;
  const repeated = raw.json<{ id: string }>().id;
  labels.name(repeated, "repeated headers");
  ids.push(repeated);
  await app.events.get(repeated);
  await until(() => received.length === ids.length, 10_000);
  for (const id of ids) {
    const event = await app.events.get(id);
    const payload = event?.payload as { body?: unknown; query?: unknown; headers?: Record<string, string> } | undefined;
    seen[`get ${labels.label(id)}`] = labels.normalize({ body: typed(payload?.body), query: payload?.query, headers: pick(payload?.headers ?? {}), raw: event?.raw?.toString("hex") });
  }
  for (const search of SEARCHES) seen[`search ${search}`] = await outcome(labels, async () => (await app.events.list({ search })).events.map((e) => e.id));
  const before = received.length;
  for (const id of ids) await app.events.replay(id);
  await until(() => received.length === before + ids.length, 10_000);
  seen["received"] = labels.normalize(received.slice(0, before));
  seen["received by replays"] = labels.normalize(received.slice(before).map((r) => ({ ...(r as object), id: undefined })));
  return seen;
}

/** The headers a scenario sent on purpose (the others name the host port and the client). */
function pick(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => name.startsWith("x-") || name === "content-type" || name === "set-cookie"));
}
