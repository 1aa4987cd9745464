import type { RequestHandler, Router } from "express";
import { SESSION_MS } from "./console-auth";
import type { ConsoleScope } from "./console-scope";
import { loginPage } from "./pages/login-page";
import { messagePage } from "./pages/message-page";
import { cameOverHttps, crossSiteReason } from "./same-origin";
import { safeNext } from "./safe-next";
import { setSecurityHeaders } from "./security-headers";

/**
 * Signing in with the token (a session cookie: HttpOnly, SameSite=Strict, on the console's
 * path, Secure when the page came over https) and signing out.
 */
export function addSignInRoutes(router: Router, scope: ConsoleScope, form: RequestHandler): void {
  const { auth, paths } = scope;
  const cookiePath = paths.base === "" ? "/" : paths.base;
  const cookie = (value: string, maxAgeSeconds: number, secure: boolean) =>
    `${auth.cookieName}=${value}; Path=${cookiePath}; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=Strict${secure ? "; Secure" : ""}`;

  router.get("/login", async (req, res) => {
    setSecurityHeaders(res);
    if (auth.mode !== "token") return res.redirect(303, paths.overview());
    const next = safeNext(typeof req.query.next === "string" ? req.query.next : paths.overview(), paths);
    const principal = await auth.signedIn(req).catch(() => undefined);
    // A Bearer header here is a try at the token as on any page: counted, and refused past the limit
    // before its answer (a redirect) is told, or this page would tell right from wrong unthrottled.
    if (auth.triesCredentials(req)) {
      const client = scope.clientOf(req);
      if (scope.throttled(client, res)) return;
      if (principal === undefined) scope.wrongCredentials(client, "a wrong Authorization header");
    }
    if (principal !== undefined) return res.redirect(303, next);
    scope.send(res, 200, loginPage(scope.context(undefined), next, false));
  });

  router.post("/login", form, (req, res) => {
    setSecurityHeaders(res);
    if (auth.mode !== "token") return res.redirect(303, paths.overview());
    // No session yet to bind a CSRF token to: the origin check alone keeps other sites from signing a browser in.
    const crossSite = crossSiteReason(req);
    if (crossSite !== undefined) return scope.send(res, 403, messagePage(scope.context(undefined), "Refused", `Sign in from the console's own page: ${crossSite}.`, "login"));
    const body = req.body as Record<string, unknown> | undefined;
    const next = safeNext(typeof body?.next === "string" ? body.next : paths.overview(), paths);
    const client = scope.clientOf(req);
    if (scope.throttled(client, res)) return;
    if (typeof body?.token !== "string" || !auth.tokenMatches(body.token)) {
      scope.wrongCredentials(client, "a wrong token");
      return scope.send(res, 401, loginPage(scope.context(undefined), next, true));
    }
    res.setHeader("set-cookie", cookie(auth.newSession(), SESSION_MS / 1000, cameOverHttps(req)));
    res.redirect(303, next);
  });

  router.post(
    "/logout",
    form,
    scope.guarded(async (req, res, principal) => {
      // Ended here, not only in the browser: a copy of the cookie is refused from now on, by every replica.
      await auth.endSession(principal);
      res.setHeader("set-cookie", cookie("", 0, cameOverHttps(req)));
      res.redirect(303, paths.login());
    }),
  );
}
