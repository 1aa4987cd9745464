import type { EventStatus, HistoryEvent, RunRecord } from "../../store/history";
import { badge, duration, pretty, longName, time } from "../format";
import { html, type Html } from "../html";
import { csrfField, layout, type PageContext } from "../layout";
import { shownHeaders, shownQuery } from "../shown-headers";

const MAX_SHOWN = 200_000;

function clip(text: string): Html {
  return text.length <= MAX_SHOWN ? html`${text}` : html`${text.slice(0, MAX_SHOWN)}<span class="muted">\n… ${text.length - MAX_SHOWN} more characters not shown</span>`;
}

function bytesOf(value: unknown): Buffer | undefined {
  if (Buffer.isBuffer(value)) return value;
  if (value instanceof Uint8Array) return Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  return undefined;
}

/** Bytes as text when they are UTF-8, else base64 (said so). */
function bytesText(bytes: Buffer): { text: string; note: string } {
  const text = bytes.toString("utf8");
  if (!text.includes("\uFFFD")) return { text, note: `${bytes.length} bytes` };
  return { text: bytes.toString("base64"), note: `${bytes.length} bytes, not UTF-8: shown in base64` };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Where linked events stand (replays, emitted, parent), looked up for the page; pruned ones are missing. */
export type LinkedStatuses = ReadonlyMap<string, EventStatus>;

function idLink(ctx: PageContext, id: string, statuses?: LinkedStatuses): Html {
  const status = statuses?.get(id);
  return html`<a class="mono" href="${ctx.paths.event(id)}">${id}</a>${status === undefined ? "" : html` ${badge(status)}`}`;
}

function links(ctx: PageContext, ids: readonly string[], statuses?: LinkedStatuses): Html {
  return ids.length === 0 ? html`<span class="muted">none</span>` : html`${ids.map((id, i) => html`${i > 0 ? html`<br>` : ""}${idLink(ctx, id, statuses)}`)}`;
}

function replayForm(ctx: PageContext, event: HistoryEvent, task: string | undefined, label: string, primary: boolean): Html {
  return html`<form method="post" action="${ctx.paths.replayEvent(event.id)}" class="inline">
    ${csrfField(ctx)}${task === undefined ? "" : html`<input type="hidden" name="task" value="${task}">`}
    <button type="submit"${primary ? "" : html` class="secondary"`}>${label}</button>
  </form>`;
}

function runRow(ctx: PageContext, run: RunRecord): Html {
  const error = run.error;
  return html`<tr>
    <td>${longName(run.task)}</td>
    <td class="num">${run.attempt}</td>
    <td class="nowrap">${time(run.startedAt)}</td>
    <td class="num">${duration(run.durationMs)}</td>
    <td>${badge(run.outcome)}</td>
    <td>${
      error === undefined
        ? run.emitted !== undefined && run.emitted.length > 0
          ? html`emitted ${links(ctx, run.emitted)}`
          : html`<span class="muted">–</span>`
        : html`<strong>${error.type}</strong>: ${error.message}${error.stack === undefined ? "" : html`<details><summary>stack</summary><pre class="stack">${error.stack}</pre></details>`}`
    }</td>
  </tr>`;
}

function requestSection(event: HistoryEvent): Html {
  const payload = event.payload;
  const raw = bytesOf(event.raw);
  const rawBlock = raw === undefined ? "" : (() => {
    const { text, note } = bytesText(raw);
    return html`<details class="raw"><summary>Raw body (${note})</summary><pre>${clip(text)}</pre></details>`;
  })();
  if (event.origin.kind === "webhook" && isRecord(payload) && "headers" in payload) {
    const headers = shownHeaders(payload.headers);
    const query = isRecord(payload.query) && Object.keys(payload.query).length > 0 ? html`<p><span class="muted">Query:</span> <code>${pretty(shownQuery(payload.query))}</code></p>` : "";
    const client = Array.isArray(payload.client) ? html` <span class="muted">from</span> ${String(payload.client[0])}` : "";
    const body = bytesOf(payload.body);
    const bodyText = body === undefined ? pretty(payload.body) : bytesText(body).text;
    return html`<section>
      <h2>Request</h2>
      <p><code>${String(payload.method ?? "")} ${String(payload.path ?? "")}</code>${client}</p>
      ${query}
      <h3>Headers</h3>
      <div class="scroll"><table class="grid headers"><tbody>${headers.map(([name, value]) => html`<tr><th scope="row" class="mono">${name}</th><td class="mono">${value}</td></tr>`)}</tbody></table></div>
      <h3>Body</h3>
      <pre class="body">${clip(bodyText)}</pre>
      ${rawBlock}
    </section>`;
  }
  return html`<section><h2>Value</h2><pre class="body">${clip(pretty(payload))}</pre>${rawBlock}</section>`;
}

export function eventPage(ctx: PageContext, event: HistoryEvent, statuses: LinkedStatuses, notice?: string): string {
  const facts: Array<[string, Html | string]> = [
    ["Received", time(event.receivedAt)],
    event.origin.kind === "webhook" ? ["Source", event.origin.source] : ["Queue", event.origin.queue],
    ["Name", event.name ?? html`<span class="muted">–</span>`],
    ["Trace id", event.traceId === undefined ? html`<span class="muted">–</span>` : html`<span class="mono">${event.traceId}</span>`],
  ];
  if (event.parentId !== undefined) facts.push(["Emitted by", idLink(ctx, event.parentId, statuses)]);
  if (event.replayOf !== undefined) facts.push(["Replay of", idLink(ctx, event.replayOf, statuses)]);
  facts.push(["Replays", links(ctx, event.replays, statuses)]);
  facts.push(["Emitted", links(ctx, event.children, statuses)]);
  const deliveries = event.deliveries.map(
    (d) => html`<tr>
      <td>${longName(d.task)}</td><td class="mono">${longName(d.queue)}</td><td>${badge(d.status)}</td><td class="num">${d.attempts}</td>
      <td>${d.lastError ?? html`<span class="muted">–</span>`}</td>
      <td>${event.deliveries.length > 1 ? replayForm(ctx, event, d.task, `Replay to ${d.task}`, false) : ""}</td>
    </tr>`,
  );
  const pending = event.status === "pending" || event.status === "failed";
  const body = html`
    <p class="crumbs"><a href="${ctx.paths.events()}">Events</a> /</p>
    <div class="title-row"><h1 class="mono id">${event.id}</h1>${badge(event.status)}<span class="spacer"></span>${replayForm(ctx, event, undefined, "Replay", true)}</div>
    <dl class="facts">${facts.map(([k, v]) => html`<dt>${k}</dt><dd>${v}</dd>`)}</dl>
    <section>
      <h2>Deliveries</h2>
      <div class="scroll"><table class="grid"><thead><tr><th>Task</th><th>Queue</th><th>Status</th><th class="num">Attempts</th><th>Last error</th><th></th></tr></thead><tbody>${deliveries}</tbody></table></div>
    </section>
    <section>
      <h2>Runs</h2>
      ${event.runs.length === 0 ? html`<p class="muted">No run yet.</p>` : html`<div class="scroll"><table class="grid runs"><thead><tr><th>Task</th><th class="num">Attempt</th><th>Started (UTC)</th><th class="num">Duration</th><th>Outcome</th><th>Error or result</th></tr></thead><tbody>${event.runs.map((r) => runRow(ctx, r))}</tbody></table></div>`}
    </section>
    ${requestSection(event)}`;
  return layout(ctx, { title: `Event ${event.id}`, section: "events", body, refresh: pending, notice: notice === undefined ? undefined : { kind: "ok", text: notice } });
}
