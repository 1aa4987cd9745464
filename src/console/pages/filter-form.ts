import { EVENT_STATUSES } from "../../store/history";
import { html, type Html } from "../html";
import type { FilterText } from "../list-filter";

/** The list's filter form (GET): every field of the list query, as query parameters. */
export function filterForm(action: string, text: FilterText, sources: readonly string[], tasks: readonly string[], paged = true): Html {
  const select = (name: "source" | "task" | "status", label: string, values: readonly string[]) => {
    const current = text[name];
    // A value the app no longer knows (an old link) stays selectable, as typed.
    const options = current !== undefined && !values.includes(current) ? [...values, current] : values;
    return html`<label>${label}<select name="${name}"><option value="">any</option>${options.map((v) => html`<option value="${v}"${v === current ? html` selected` : ""}>${v}</option>`)}</select></label>`;
  };
  return html`<form method="get" action="${action}" class="filters">
    ${select("source", "Source", sources)}
    ${select("task", "Task", tasks)}
    ${select("status", "Status", EVENT_STATUSES)}
    <label>Since<input name="since" value="${text.since ?? ""}" placeholder="1h, 2026-11-25T18:00Z" size="14"></label>
    <label>Until<input name="until" value="${text.until ?? ""}" placeholder="10m, 2026-11-25" size="14"></label>
    <label class="wide">Search<input name="search" type="search" value="${text.search ?? ""}" placeholder="event id, header value, or field.path=value in the body"></label>
    ${paged ? html`<label>Per page<input name="limit" value="${text.limit ?? ""}" placeholder="50" size="4" inputmode="numeric"></label>` : ""}
    <button type="submit">Filter</button>
  </form>`;
}
