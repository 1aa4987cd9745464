import type { AppStatus } from "../../app/app-status";
import type { ActivityRow } from "../../store/history";
import type { ConsoleTask } from "../console-backend";
import { activityChart } from "../activity-chart";
import type { BulkReplayJob } from "../bulk-replays";
import { duration, time } from "../format";
import { html, type Html } from "../html";
import { csrfField, layout, type PageContext } from "../layout";

export interface OverviewData {
  readonly now: number;
  readonly status: AppStatus;
  readonly tasks: readonly ConsoleTask[];
  readonly paused: ReadonlySet<string>;
  readonly historyEnabled: boolean;
  /** Last hour, in `bucketMs` buckets from `hourSince`. */
  readonly hour: readonly ActivityRow[];
  readonly hourSince: number;
  readonly bucketMs: number;
  readonly day: readonly ActivityRow[];
  readonly jobs: readonly BulkReplayJob[];
}

interface Counts {
  received: number;
  succeeded: number;
  failed: number;
  dead: number;
}

function countsByTask(rows: readonly ActivityRow[]): Map<string, Counts> {
  const out = new Map<string, Counts>();
  for (const row of rows) {
    let c = out.get(row.task);
    if (c === undefined) out.set(row.task, (c = { received: 0, succeeded: 0, failed: 0, dead: 0 }));
    c.received += row.received;
    c.succeeded += row.succeeded;
    c.failed += row.failed;
    c.dead += row.dead;
  }
  return out;
}

export function overviewPage(ctx: PageContext, data: OverviewData, notice?: string): string {
  const { paths } = ctx;
  const hour = countsByTask(data.hour);
  const day = countsByTask(data.day);
  const zero: Counts = { received: 0, succeeded: 0, failed: 0, dead: 0 };
  const link = (task: string, since: string, status: string | undefined, n: number): Html => {
    if (n === 0) return html`<span class="zero">0</span>`;
    const params = new URLSearchParams({ task, since });
    if (status !== undefined) params.set("status", status);
    return html`<a href="${paths.events(params)}">${n}</a>`;
  };
  const cells = (task: string, c: Counts, since: string) => html`
    <td class="num">${link(task, since, undefined, c.received)}</td>
    <td class="num ok">${link(task, since, "succeeded", c.succeeded)}</td>
    <td class="num warn">${link(task, since, "failed", c.failed)}</td>
    <td class="num bad">${link(task, since, "dead", c.dead)}</td>`;
  const rows = data.tasks.map((task) => {
    const queueName = data.status.tasks.find((t) => t.name === task.name)?.queue;
    const queue = data.status.queues.find((q) => q.queue === queueName);
    const paused = data.paused.has(task.name);
    const action = paused ? paths.resume(task.name) : paths.pause(task.name);
    // The state and its Pause button sit beside the name: at the end of eleven counts they were off-screen.
    return html`<tr>
      <th scope="row"><a class="name" href="${paths.events(new URLSearchParams({ task: task.name }))}">${task.name}</a></th>
      <td class="nowrap">
        <form method="post" action="${action}" class="inline"${paused ? "" : html` data-confirm="Pause ${task.name}? Its events are still accepted and stored; none runs until you resume it."`}>
          ${csrfField(ctx)}
          ${paused ? html`<span class="badge badge-paused">paused</span> <button type="submit">Resume</button>` : html`<span class="badge badge-running">running</span> <button type="submit" class="secondary">Pause</button>`}
        </form>
      </td>
      <td>${task.source ?? html`<span class="muted">queue</span> ${task.input ?? ""}`}</td>
      ${cells(task.name, hour.get(task.name) ?? zero, "1h")}
      ${cells(task.name, day.get(task.name) ?? zero, "24h")}
      <td class="num">${queue === undefined || queue.depth === 0 ? html`<span class="zero">0</span>` : queue.depth}</td>
      <td class="num">${queue === undefined || queue.depth === 0 ? html`<span class="zero">–</span>` : duration(queue.oldestAgeSeconds * 1000)}</td>
      <td class="num">${queue !== undefined && queue.deadLetters > 0 ? html`<a class="bad" href="${paths.deadLetters()}">${queue.deadLetters}</a>` : html`<span class="zero">0</span>`}</td>
    </tr>`;
  });
  const readiness = data.status.readiness;
  const jobs = data.jobs.length === 0 ? "" : html`<section><h2>Bulk replays</h2><ul class="jobs">${data.jobs.map((job) => jobLine(ctx, job))}</ul></section>`;
  const body = html`
    <div class="title-row"><h1>Overview</h1>${readiness === undefined ? "" : html`<span class="badge ${readiness.ready ? "badge-succeeded" : "badge-dead"}">${readiness.ready ? "ready" : "not ready"}</span>`}</div>
    ${data.historyEnabled ? "" : html`<p class="notice notice-error">This app keeps no event history (<code>history: false</code>): the counts and the event list stay empty.</p>`}
    <section>
      <h2>Last hour</h2>
      ${activityChart(data.hour, data.hourSince, data.bucketMs, Math.ceil((data.now - data.hourSince) / data.bucketMs))}
    </section>
    <section>
      <h2>Tasks</h2>
      <div class="scroll"><table class="grid">
        <thead>
          <tr><th rowspan="2">Task</th><th rowspan="2">State</th><th rowspan="2">Source</th><th colspan="4" class="group">Last hour</th><th colspan="4" class="group">Last 24 hours</th><th colspan="3" class="group">Queue</th></tr>
          <tr>${["received", "succeeded", "failed", "dead", "received", "succeeded", "failed", "dead"].map((h) => html`<th class="num">${h}</th>`)}<th class="num">depth</th><th class="num">oldest</th><th class="num">dead letters</th></tr>
        </thead>
        <tbody>${rows.length === 0 ? html`<tr><td colspan="15" class="muted">No tasks.</td></tr>` : rows}</tbody>
      </table></div>
    </section>
    ${jobs}
    <p class="muted small">As of ${time(data.now)}.</p>`;
  return layout(ctx, { title: "Overview", section: "overview", body, refresh: data.jobs.some((j) => j.finishedAt === undefined), notice: notice === undefined ? undefined : { kind: "ok", text: notice } });
}

export function jobLine(ctx: PageContext, job: BulkReplayJob): Html {
  const events = html`<a href="${ctx.paths.events(new URLSearchParams(job.filter))}">events matching ${job.filter === "" ? "everything" : job.filter}</a>`;
  const to = job.task === undefined ? "" : html` to ${job.task}`;
  if (job.error !== undefined) return html`<li>${time(job.startedAt)}: replay of ${events}${to} <span class="bad">failed: ${job.error}</span></li>`;
  if (job.result === undefined) return html`<li>${time(job.startedAt)}: replaying ${events}${to}… <span class="muted">(paced; this page refreshes)</span></li>`;
  return html`<li>${time(job.startedAt)}: replayed ${events}${to}: ${job.result.queued} of ${job.result.matched} queued.</li>`;
}
