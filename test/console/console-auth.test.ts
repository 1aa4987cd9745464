import type { IncomingMessage } from "node:http";
import { expect } from "chai";
import { ConsoleAuthenticator, SESSION_MS, sessionCookieName } from "../../src/console/console-auth";
import { FilterError, historyQuery, parseTime } from "../../src/console/list-filter";
import { resolveConsoleOptions } from "../../src/console/console-options";
import { isLoopbackHost } from "../../src/http/loopback-host";
import { html, trusted } from "../../src/console/html";
import { ConsoleSignOuts } from "../../src/console/console-sign-outs";
import { MemoryStore } from "../../src/store/memory/memory-store";
import { SignInThrottle } from "../../src/console/sign-in-throttle";
import { safeNext } from "../../src/console/safe-next";
import { ConsolePaths } from "../../src/console/console-paths";

const TOKEN = "a-token-of-sufficient-length";
const SESSION_COOKIE = sessionCookieName("shop");
const request = (headers: Record<string, string>) => ({ headers }) as unknown as IncomingMessage;

describe("console: sessions, CSRF tokens, filters, escaping", () => {
  it("ends a session when it expires, and when the token changes; a restart keeps it", () => {
    const auth = new ConsoleAuthenticator({ token: TOKEN }, "shop");
    const now = 1_700_000_000_000;
    const cookie = `${SESSION_COOKIE}=${auth.newSession(now)}`;
    expect(auth.authenticate(request({ cookie }), now + 1000)?.kind).to.equal("session");
    expect(auth.authenticate(request({ cookie }), now + SESSION_MS + 1)).to.equal(undefined);
    expect(new ConsoleAuthenticator({ token: `${TOKEN}-rotated` }, "shop").authenticate(request({ cookie }), now + 1000)).to.equal(undefined);
    // Another app's console (another cookie name) does not read it.
    expect(new ConsoleAuthenticator({ token: TOKEN }, "other").authenticate(request({ cookie }), now + 1000)).to.equal(undefined);
    // A restart, or another replica (a new authenticator, same token), takes it.
    expect(new ConsoleAuthenticator({ token: TOKEN }, "shop").authenticate(request({ cookie }), now + 1000)?.kind).to.equal("session");
  });

  it("refuses a signed-out session everywhere the store is shared: a copy of its cookie, another replica, after a restart; other sessions and the Bearer token go on", async () => {
    const store = new MemoryStore();
    await store.open();
    const replica = () => new ConsoleAuthenticator({ token: TOKEN }, "shop", new ConsoleSignOuts(store.state("console")));
    const auth = replica();
    const mine = request({ cookie: `${SESSION_COOKIE}=${auth.newSession()}` });
    const other = request({ cookie: `${SESSION_COOKIE}=${auth.newSession()}` });
    const principal = (await auth.signedIn(mine))!;
    expect(principal.kind).to.equal("session");
    expect((await replica().signedIn(mine))?.kind, "another replica takes the session").to.equal("session");
    await auth.endSession(principal);
    expect(await auth.signedIn(mine)).to.equal(undefined);
    expect(await replica().signedIn(mine), "nor does another replica, or this one restarted").to.equal(undefined);
    expect((await auth.signedIn(other))?.kind).to.equal("session");
    const bearer = request({ authorization: `Bearer ${TOKEN}` });
    await auth.endSession((await auth.signedIn(bearer))!);
    expect((await auth.signedIn(bearer))?.kind).to.equal("bearer");
    // Without a store, the process alone remembers it.
    const alone = new ConsoleAuthenticator({ token: TOKEN }, "shop");
    const cookie = request({ cookie: `${SESSION_COOKIE}=${alone.newSession()}` });
    await alone.endSession((await alone.signedIn(cookie))!);
    expect(await alone.signedIn(cookie)).to.equal(undefined);
  });

  it("keeps a sign-out only as long as its cookie would have lasted", async () => {
    const store = new MemoryStore();
    await store.open();
    const signOuts = new ConsoleSignOuts(store.state("console"));
    const now = Date.now();
    await signOuts.end("n1", now + 50, now);
    expect(await signOuts.ended("n1", now + 10)).to.equal(true);
    expect(await new ConsoleSignOuts(store.state("console")).ended("n1", now + 10), "read from the store").to.equal(true);
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(await store.state("console").get("n1"), "gone from the store with its cookie's expiry").to.equal(undefined);
    expect(await new ConsoleSignOuts(store.state("console")).ended("n1")).to.equal(false);
    expect(await signOuts.ended("n1"), "and from this process").to.equal(false);
  });

  it("binds the CSRF token to the session", () => {
    const auth = new ConsoleAuthenticator({ token: TOKEN }, "shop");
    const a = auth.authenticate(request({ cookie: `${SESSION_COOKIE}=${auth.newSession()}` }))!;
    const b = auth.authenticate(request({ cookie: `${SESSION_COOKIE}=${auth.newSession()}` }))!;
    expect(auth.csrfMatches(a, auth.csrfToken(a))).to.equal(true);
    expect(auth.csrfMatches(a, auth.csrfToken(b))).to.equal(false);
    expect(auth.csrfMatches(a, undefined)).to.equal(false);
    expect(auth.csrfMatches(a, [auth.csrfToken(a)])).to.equal(false);
  });

  it("takes a Bearer token or a basic pair only when they match exactly", () => {
    const token = new ConsoleAuthenticator({ token: TOKEN }, "shop");
    expect(token.authenticate(request({ authorization: `Bearer ${TOKEN}` }))?.kind).to.equal("bearer");
    expect(token.authenticate(request({ authorization: `Bearer ${TOKEN}x` }))).to.equal(undefined);
    expect(token.authenticate(request({ authorization: `Basic ${Buffer.from(`x:${TOKEN}`).toString("base64")}` }))).to.equal(undefined);
    const basic = new ConsoleAuthenticator({ username: "ops", password: "a-long-password" }, "shop");
    const pair = (text: string) => request({ authorization: `Basic ${Buffer.from(text).toString("base64")}` });
    expect(basic.authenticate(pair("ops:a-long-password"))?.kind).to.equal("basic");
    expect(basic.authenticate(pair("ops:a-long-passwor"))).to.equal(undefined);
    expect(basic.authenticate(pair("op:sa-long-password"))).to.equal(undefined);
    expect(basic.authenticate(request({ authorization: `Bearer ${TOKEN}` }))).to.equal(undefined);
  });

  it("reads the filters' times, and says which field is wrong", () => {
    const now = Date.UTC(2026, 10, 25, 18, 0, 0);
    expect(parseTime("15m", "since", now)).to.equal(now - 15 * 60_000);
    expect(parseTime("2d", "since", now)).to.equal(now - 2 * 86_400_000);
    expect(parseTime("2026-11-25", "since", now)).to.equal(Date.UTC(2026, 10, 25));
    expect(parseTime("2026-11-25T17:30", "since", now)).to.equal(Date.UTC(2026, 10, 25, 17, 30));
    expect(parseTime("2026-11-25T17:30+01:00", "since", now)).to.equal(Date.UTC(2026, 10, 25, 16, 30));
    expect(parseTime("1764093600000", "since", now)).to.equal(1764093600000);
    expect(() => parseTime("tomorrow", "until", now)).to.throw(FilterError, 'until: "tomorrow" is not a time');
    expect(() => historyQuery({ since: "1h", until: "2h" }, now)).to.throw(FilterError, "since must be before until");
    expect(historyQuery({ status: "dead", limit: "20", search: "repository.full_name=octo/repo" }, now)).to.deep.equal({ status: "dead", limit: 20, search: "repository.full_name=octo/repo" });
  });

  it("escapes every value put into a page, unless it is markup the console made", () => {
    expect(html`<p title="${`"><script>`}">${"<b>&'"}</p>`.value).to.equal("<p title=\"&quot;&gt;&lt;script&gt;\">&lt;b&gt;&amp;&#39;</p>");
    expect(html`<p>${[html`<i>${"<x>"}</i>`, "<y>"]}${trusted("<svg/>")}${undefined}${false}</p>`.value).to.equal("<p><i>&lt;x&gt;</i>&lt;y&gt;<svg/></p>");
  });

  it("knows loopback hosts, and the defaults", () => {
    for (const host of ["127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost", "LOCALHOST", "LocalHost", "::ffff:127.0.0.1"]) expect(isLoopbackHost(host), host).to.equal(true);
    for (const host of ["0.0.0.0", "::", "10.0.0.1", "example.com", "localhost.example.com"]) expect(isLoopbackHost(host), host).to.equal(false);
    expect(resolveConsoleOptions(true)).to.deep.equal({ host: "127.0.0.1", port: 9400, path: "/", auth: undefined, placed: false });
    expect(resolveConsoleOptions({ path: "/console/" })?.path).to.equal("/console");
    expect(resolveConsoleOptions(false)).to.equal(undefined);
  });
});

describe("console: sign-in throttle", () => {
  it("refuses an address past the limit until its window ends, and forgets the oldest addresses past its size", () => {
    const throttle = new SignInThrottle(3, 60_000, 2);
    const t0 = 1_000_000;
    for (let i = 0; i < 3; i++) {
      expect(throttle.retryAfter("a", t0)).to.equal(undefined);
      throttle.failed("a", t0);
    }
    expect(throttle.retryAfter("a", t0 + 1_000)).to.equal(59);
    expect(throttle.retryAfter("b", t0 + 1_000)).to.equal(undefined);
    expect(throttle.retryAfter("a", t0 + 60_000)).to.equal(undefined);
    for (const client of ["a", "b", "c"]) throttle.failed(client, t0 + 61_000);
    // "a" went when "c" came (two addresses at most): its count starts again.
    for (let i = 0; i < 2; i++) throttle.failed("a", t0 + 61_000);
    expect(throttle.retryAfter("a", t0 + 61_000)).to.equal(undefined);
  });
});

describe("console: where a redirect may go", () => {
  it("stays inside the console, at its root or under a path", () => {
    const root = new ConsolePaths("");
    const under = new ConsolePaths("/console");
    expect(safeNext("/events?status=dead", root)).to.equal("/events?status=dead");
    expect(safeNext("/console/events/x", under)).to.equal("/console/events/x");
    expect(safeNext("/console", under)).to.equal("/console");
    expect(safeNext("/console/events?search=a/../b", under)).to.equal("/console/events?search=a/../b");
    expect(safeNext("/console/events/..x", under)).to.equal("/console/events/..x");
    for (const bad of ["//evil.example", "/\\evil.example", "https://evil.example/", "events", "/metrics", "/consoled/x", "/console/\r\nx", "/console/../evil", "/console/%2e%2e/evil", "/console/.%2E/evil", "/console/x/../../evil", "/console/./..", "/console/.."]) {
      expect(safeNext(bad, under), bad).to.equal("/console/");
    }
  });
});
