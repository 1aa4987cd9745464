import { html } from "../html";
import { layout, type PageContext, type Section } from "../layout";

/** A refusal or a miss as a page: what happened, and a way back. */
export function messagePage(ctx: PageContext, title: string, text: string, section: Section = "overview"): string {
  const body = html`<h1>${title}</h1><p>${text}</p><p><a href="${ctx.paths.overview()}">Back to the overview</a></p>`;
  return layout(ctx, { title, section, body });
}
