import type { EventSummary, HistoryPage } from "../../store/history";
import { badge, longName, time } from "../format";
import { html, type Html } from "../html";
import { csrfField, layout, type PageContext } from "../layout";
import { filterParams, narrows, type FilterText } from "../list-filter";
import { filterForm } from "./filter-form";

export interface EventsData {
  readonly text: FilterText;
  /** Undefined when the filter was refused (`error` says why). */
  readonly page: HistoryPage | undefined;
  readonly error?: string;
  readonly notice?: string;
  readonly sources: readonly string[];
  readonly tasks: readonly string[];
}

export function originOf(event: EventSummary): Html {
  return event.origin.kind === "webhook" ? html`${event.origin.source}` : html`<span class="muted">queue</span> ${event.origin.queue}`;
}

export function eventsPage(ctx: PageContext, data: EventsData): string {
  const { paths } = ctx;
  const events = data.page?.events ?? [];
  const rows = events.map(
    (e) => html`<tr>
      <td class="pick"><input type="checkbox" name="id" value="${e.id}" aria-label="select ${e.id}"></td>
      <td class="nowrap">${time(e.receivedAt)}</td>
      <td><a class="mono" href="${paths.event(e.id)}">${e.id}</a>${e.replayOf !== undefined ? html` <span class="tag" title="replay of ${e.replayOf}">replay</span>` : ""}${e.parentId !== undefined ? html` <span class="tag" title="emitted by ${e.parentId}">emitted</span>` : ""}</td>
      <td>${originOf(e)}</td>
      <td>${e.name ?? html`<span class="muted">–</span>`}</td>
      <td>${badge(e.status)}</td>
      <td class="deliveries">${e.deliveries.map((d) => html`<span class="delivery" title="${d.lastError ?? ""}">${longName(d.task)} ${badge(d.status)}${d.attempts > 1 ? html` <span class="muted">×${d.attempts}</span>` : ""}</span>`)}</td>
    </tr>`,
  );
  const firstPage = data.text.cursor === undefined;
  const newer = firstPage ? "" : html`<a class="button secondary" href="${paths.events(filterParams(data.text, ["cursor"]))}">← Newest</a>`;
  const older = data.page?.next === undefined ? "" : html`<a class="button secondary" rel="next" href="${paths.events(new URLSearchParams([...filterParams(data.text, ["cursor"]), ["cursor", data.page.next]]))}">Older →</a>`;
  const matching = filterParams(data.text, ["cursor", "limit"]);
  const body = html`
    <div class="title-row"><h1>Events</h1><a class="button secondary" href="${paths.replayMatching(matching)}">Replay all matching…</a></div>
    ${filterForm(paths.events(), data.text, data.sources, data.tasks)}
    ${data.error !== undefined ? html`<p class="notice notice-error" role="alert">${data.error}</p>` : ""}
    <form method="post" action="${paths.replaySelected()}" class="selection" data-confirm="Replay the selected events?">
      ${csrfField(ctx)}
      <input type="hidden" name="back" value="${paths.events(filterParams(data.text))}">
      <div class="scroll"><table class="grid events">
        <thead><tr><th class="pick"><input type="checkbox" data-select-all="id" aria-label="select all"></th><th>Received (UTC)</th><th>Event</th><th>Source</th><th>Name</th><th>Status</th><th>Deliveries</th></tr></thead>
        <tbody>${rows.length === 0 ? html`<tr><td colspan="7" class="muted empty">${data.error !== undefined ? "" : narrows(data.text) ? "No event matches this filter." : "No events yet."}</td></tr>` : rows}</tbody>
      </table></div>
      <div class="actions"><button type="submit">Replay selected</button><span class="spacer"></span>${newer}${older}</div>
    </form>`;
  return layout(ctx, { title: "Events", section: "events", body, notice: data.notice === undefined ? undefined : { kind: "ok", text: data.notice } });
}
