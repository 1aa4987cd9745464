import { html } from "../html";
import { layout, type PageContext } from "../layout";

/**
 * The token, typed once: the answer sets a session cookie (HttpOnly, SameSite=Strict). `note`:
 * why the form is asked for again (a form sent after the session ended).
 */
export function loginPage(ctx: PageContext, next: string, failed: boolean, note?: string): string {
  const body = html`<form method="post" action="${ctx.paths.login()}" class="panel login">
    <h1>Sign in</h1>
    ${failed ? html`<p class="notice notice-error" role="alert">That token is not this console's.</p>` : note !== undefined ? html`<p class="notice notice-error" role="alert">${note}</p>` : html`<p class="muted">This console needs its access token.</p>`}
    <input type="hidden" name="next" value="${next}">
    <label>Token<input type="password" name="token" autocomplete="current-password" required autofocus></label>
    <button type="submit">Sign in</button>
  </form>`;
  return layout(ctx, { title: "Sign in", section: "login", body });
}
