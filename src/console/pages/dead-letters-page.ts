import type { DeadLetter } from "../../store/store";
import { longName, time } from "../format";
import { html } from "../html";
import { csrfField, layout, type PageContext } from "../layout";

/**
 * The id of the history event a letter's message came from: a copy of an event handed to
 * several tasks is `<event id>@<task>`; the others carry the event's own id.
 */
export function eventIdOf(letter: DeadLetter): string {
  const id = letter.message.id;
  const suffix = `@${letter.task}`;
  return id.endsWith(suffix) ? id.slice(0, -suffix.length) : id;
}

/**
 * A letter's Replay replays its event to the letter's task when the history has the event;
 * without it (`history: false`, or pruned) the letter goes back to its queue as it is.
 */
export function deadLettersPage(ctx: PageContext, letters: readonly DeadLetter[], historyEnabled: boolean, notice?: string): string {
  const { paths } = ctx;
  const rows = letters.map((letter) => {
    const eventId = eventIdOf(letter);
    const replay = html`<form method="post" action="${paths.replayDeadLetter(letter.message.id)}" class="inline">${csrfField(ctx)}<button type="submit">Replay</button></form>`;
    return html`<tr>
      <td class="nowrap">${time(letter.diedAt)}</td>
      <td>${longName(letter.task)}</td>
      <td>${historyEnabled ? html`<a class="mono" href="${paths.event(eventId)}">${eventId}</a>` : html`<span class="mono">${eventId}</span>`}</td>
      <td class="num">${letter.attempts}</td>
      <td class="error-text">${letter.error}</td>
      <td class="nowrap">
        ${replay}
        <form method="post" action="${paths.discardDeadLetter(letter.message.id)}" class="inline" data-confirm="Discard this dead letter for good? Its event stays in the history.">${csrfField(ctx)}<button type="submit" class="secondary">Discard</button></form>
      </td>
    </tr>`;
  });
  const body = html`
    <div class="title-row"><h1>Dead letters</h1><span class="muted">${letters.length}</span><span class="spacer"></span>${letters.length > 0 && historyEnabled ? html`<a class="button secondary" href="${paths.replayMatching(new URLSearchParams({ status: "dead" }))}">Replay all dead…</a>` : ""}</div>
    <p class="muted">Deliveries that failed every attempt. A replay is a new delivery of the event to the task, linked to it in the history; the dead letter is then discarded.</p>
    <div class="scroll"><table class="grid">
      <thead><tr><th>Died (UTC)</th><th>Task</th><th>Event</th><th class="num">Attempts</th><th>Error</th><th></th></tr></thead>
      <tbody>${rows.length === 0 ? html`<tr><td colspan="6" class="muted empty">No dead letters.</td></tr>` : rows}</tbody>
    </table></div>`;
  return layout(ctx, { title: "Dead letters", section: "dead-letters", body, notice: notice === undefined ? undefined : { kind: "ok", text: notice } });
}
