import type { ConsoleAssets } from "./console-assets";
import type { ConsolePaths } from "./console-paths";
import { html, type Html } from "./html";

/** What every page needs besides its own data. */
export interface PageContext {
  readonly appName: string;
  readonly paths: ConsolePaths;
  readonly assets: ConsoleAssets;
  /** The CSRF token every form posts back; undefined for a visitor not signed in (no navigation then). */
  readonly csrf: string | undefined;
  /** Signed in with the login page: offer to sign out. */
  readonly session: boolean;
}

export type Section = "overview" | "events" | "dead-letters" | "login";

export interface PageInit {
  readonly title: string;
  readonly section: Section;
  readonly body: Html;
  /** Reload the page every few seconds (something on it is still running). */
  readonly refresh?: boolean;
  /** A short line above the content. */
  readonly notice?: { readonly kind: "ok" | "error"; readonly text: string };
}

export function csrfField(ctx: PageContext): Html {
  return html`<input type="hidden" name="_csrf" value="${ctx.csrf ?? ""}">`;
}

export function layout(ctx: PageContext, page: PageInit): string {
  const { paths } = ctx;
  const nav = (section: Section, href: string, label: string) => html`<a href="${href}"${page.section === section ? html` aria-current="page"` : ""}>${label}</a>`;
  const signedIn = ctx.session
    ? html`<form method="post" action="${paths.logout()}" class="logout">${csrfField(ctx)}<button type="submit" class="link">Sign out</button></form>`
    : "";
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin">
<title>${page.title} · ${ctx.appName}</title>
<link rel="icon" type="image/svg+xml" href="${paths.asset(ctx.assets.nameOf("favicon.svg"))}">
<link rel="stylesheet" href="${paths.asset(ctx.assets.nameOf("console.css"))}">
<script src="${paths.asset(ctx.assets.nameOf("console.js"))}" defer></script>
</head>
<body${page.refresh ? html` data-refresh="3000"` : ""}>
<header class="top">
  <a class="brand" href="${paths.overview()}"><span class="logo" aria-hidden="true">⟲</span> ${ctx.appName}</a>
  ${page.section === "login" || ctx.csrf === undefined ? "" : html`<nav>${nav("overview", paths.overview(), "Overview")}${nav("events", paths.events(), "Events")}${nav("dead-letters", paths.deadLetters(), "Dead letters")}</nav>${signedIn}`}
</header>
<main>
${page.notice ? html`<p class="notice notice-${page.notice.kind}" role="status">${page.notice.text}</p>` : ""}
${page.body}
</main>
</body>
</html>
`.value;
}
