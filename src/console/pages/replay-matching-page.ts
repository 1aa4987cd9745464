import type { BulkReplayJob } from "../bulk-replays";
import { html } from "../html";
import { csrfField, layout, type PageContext } from "../layout";
import { filterParams, narrows, type FilterText } from "../list-filter";
import { filterForm } from "./filter-form";
import { jobLine } from "./overview-page";

export interface ReplayMatchingData {
  readonly text: FilterText;
  /** The dry run's count; undefined when the filter was refused. */
  readonly matched: number | undefined;
  readonly error?: string;
  readonly sources: readonly string[];
  readonly tasks: readonly string[];
  readonly jobs: readonly BulkReplayJob[];
}

/** A bulk replay, in two steps: this page shows the dry run's count, its form queues the replays. */
export function replayMatchingPage(ctx: PageContext, data: ReplayMatchingData): string {
  const { paths } = ctx;
  const params = filterParams(data.text, ["cursor", "limit"]);
  const hidden = [...params].map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`);
  const everything = !narrows(data.text);
  const confirm =
    data.matched === undefined || data.matched === 0
      ? ""
      : html`<form method="post" action="${paths.replayMatching()}" class="panel" data-confirm="Replay ${data.matched} events?">
          ${csrfField(ctx)}${hidden}
          <p>The filter matches <strong class="count">${data.matched}</strong> event${data.matched === 1 ? "" : "s"}${everything ? html` (<strong>every event in the history</strong>)` : ""}. Each is delivered again, as a new event linked to it.</p>
          <label>Only to task <select name="replayTask"><option value="">every task it was handed to</option>${data.tasks.map((t) => html`<option value="${t}"${t === data.text.task ? html` selected` : ""}>${t}</option>`)}</select></label>
          <label>At most per second <input name="ratePerSecond" value="50" size="5" inputmode="numeric"></label>
          ${everything ? html`<label class="check"><input type="checkbox" name="everything" value="yes" required> Yes, replay every event</label>` : ""}
          <button type="submit">Replay ${data.matched} event${data.matched === 1 ? "" : "s"}</button>
        </form>`;
  const body = html`
    <p class="crumbs"><a href="${paths.events(params)}">Events</a> /</p>
    <h1>Replay all matching</h1>
    ${filterForm(paths.replayMatching(), data.text, data.sources, data.tasks, false)}
    ${data.error !== undefined ? html`<p class="notice notice-error" role="alert">${data.error}</p>` : ""}
    ${data.matched === 0 ? html`<p class="notice">No event matches this filter: nothing to replay.</p>` : ""}
    ${confirm}
    ${data.jobs.length === 0 ? "" : html`<section><h2>Bulk replays</h2><ul class="jobs">${data.jobs.map((job) => jobLine(ctx, job))}</ul></section>`}`;
  return layout(ctx, { title: "Replay all matching", section: "events", body, refresh: data.jobs.some((j) => j.finishedAt === undefined) });
}
