import { expect } from "chai";
import { CONTENT_SECURITY_POLICY } from "../../src/console/security-headers";
import { createDefaultLogger } from "../../src/index";
import { ConsoleClient } from "./console-client";
import { recordingLogger, type LogLine } from "../helpers/wait";
import { CONSOLE_TOKEN, eventually, startShop, type ShopApp } from "./shop-app";

describe("console over HTTP", function () {
  this.timeout(20_000);
  let shop: ShopApp;
  let client: ConsoleClient;

  beforeEach(async () => {
    shop = await startShop();
    client = new ConsoleClient(shop.consoleUrl);
  });
  afterEach(async () => {
    await shop.stop();
  });

  async function settled(id: string, status: string): Promise<void> {
    await eventually(async () => ((await shop.app.events.get(id))?.status === status ? true : undefined), 5_000, `event ${id} to be ${status}`);
  }

  it("serves on its own listener, not on the webhooks' port", () => {
    expect(new URL(shop.consoleUrl).port).to.not.equal(new URL(shop.github.url).port);
    expect(shop.consoleUrl).to.match(/^http:\/\/127\.0\.0\.1:\d+\/$/);
  });

  it("answers 401 without credentials, on every page and every action", async () => {
    const id = await shop.deliver({ order: "o-1" });
    for (const path of ["/", "/events", `/events/${id}`, "/dead-letters", "/replay-matching?status=dead"]) {
      const answer = await client.request(path);
      expect(answer.status, path).to.equal(401);
      expect(answer.text, path).to.not.include("o-1");
    }
    const login = await client.request("/events");
    expect(login.text).to.include('name="token"');
    for (const path of [`/events/${id}/replay`, "/replay", "/replay-matching", "/tasks/billing/pause", "/logout"]) {
      const answer = await client.request(path, { form: { _csrf: "x" }, headers: { origin: client.origin } });
      expect(answer.status, path).to.equal(401);
    }
    const wrong = await client.request("/", { headers: { authorization: "Bearer not-the-token-at-all-0000" } });
    expect(wrong.status).to.equal(401);
    const bearer = await client.request("/", { headers: { authorization: `Bearer ${CONSOLE_TOKEN}` } });
    expect(bearer.status).to.equal(200);
  });

  it("signs in with the token once: an HttpOnly, SameSite=Strict session cookie on the console's path", async () => {
    const refused = await client.signIn("a-wrong-token-of-enough-length");
    expect(refused.status).to.equal(401);
    expect(refused.headers.get("set-cookie")).to.equal(null);
    expect(refused.text).to.include("not this console");
    const answer = await client.signIn();
    expect(answer.status).to.equal(303);
    const cookie = answer.headers.get("set-cookie") ?? "";
    expect(cookie).to.match(/^wt_console_shop=[^;]+; Path=\/; Max-Age=43200; HttpOnly; SameSite=Strict$/);
    expect(cookie).to.not.include(CONSOLE_TOKEN);
    expect((await client.request("/")).status).to.equal(200);
    // A page served over https (its Origin says so) gets a Secure cookie.
    const secure = await new ConsoleClient(shop.consoleUrl).request("/login", { form: { token: CONSOLE_TOKEN }, headers: { origin: "https://console.example", "sec-fetch-site": "same-origin" } });
    expect(secure.status).to.equal(403, "the origin is not this console's");
    const proxied = await new ConsoleClient(shop.consoleUrl).request("/login", { form: { token: CONSOLE_TOKEN }, headers: { origin: client.origin, "x-forwarded-proto": "https" } });
    expect(proxied.headers.get("set-cookie")).to.match(/; Secure$/);
    // A tampered cookie is no session.
    const forged = new ConsoleClient(shop.consoleUrl);
    forged.cookie = client.cookie!.replace(/^(wt_console_shop=)(\d+)/, (_m, name: string, expires: string) => `${name}${Number(expires) + 1}`);
    expect((await forged.request("/")).status).to.equal(401);
    // Signing out ends the cookie.
    const out = await client.post("/logout");
    expect(out.status).to.equal(303);
    expect(out.headers.get("set-cookie")).to.match(/^wt_console_shop=; Path=\/; Max-Age=0/);
  });

  it("ends the session on the server at sign-out: a copy of the cookie is refused, the Bearer token still works", async () => {
    const id = await shop.deliver({ order: "o-out" });
    await client.signIn();
    const other = new ConsoleClient(shop.consoleUrl);
    await other.signIn();
    const copy = new ConsoleClient(shop.consoleUrl);
    copy.cookie = client.cookie;
    const csrf = await copy.csrf();
    expect((await copy.request(`/events/${id}`)).status).to.equal(200);
    expect((await client.post("/logout")).status).to.equal(303);
    // The copy kept its cookie (a browser ignores nothing here): the server refuses it now.
    const page = await copy.request(`/events/${id}`);
    expect(page.status).to.equal(401);
    expect(page.text).to.include('name="token"').and.not.include("o-out");
    expect((await copy.request("/", { headers: { accept: "text/html" } })).status).to.equal(401);
    expect((await copy.post(`/events/${id}/replay`, {}, csrf)).status).to.equal(401);
    expect((await copy.request("/login")).status, "the login page asks again").to.equal(200);
    // Another browser's session and the Bearer token are not touched.
    expect((await other.request("/")).status).to.equal(200);
    expect((await new ConsoleClient(shop.consoleUrl, CONSOLE_TOKEN).request(`/events/${id}`)).status).to.equal(200);
  });

  it("answers a form sent after the session ended with the sign-in form, back to the page it came from, and does nothing", async () => {
    await client.signIn();
    const csrf = await client.csrf("/events?task=billing");
    // The session ends while the page is open (it expired, or was signed out elsewhere): the browser sends no cookie now.
    client.cookie = undefined;
    const answer = await client.request("/tasks/billing/pause", {
      form: { _csrf: csrf },
      headers: { origin: client.origin, "sec-fetch-site": "same-origin", referer: client.url("/events?task=billing") },
    });
    expect(answer.status).to.equal(401);
    expect(answer.text).to.include('name="token"').and.include('name="next" value="/events?task=billing"').and.include("was not done");
    expect(await shop.app.paused(), "nothing paused").to.deep.equal([]);
    // A Referer of another site is no place to go back to.
    const elsewhere = await client.request("/tasks/billing/pause", { form: { _csrf: csrf }, headers: { origin: client.origin, referer: "http://evil.example/events" } });
    expect(elsewhere.text).to.include('name="next" value="/"');
  });

  it("sends a Content-Security-Policy without inline script, and pages with neither inline script nor inline style", async () => {
    const id = await shop.deliver({ order: "o-csp", fail: true });
    await settled(id, "dead");
    const login = await client.request("/");
    expect(login.headers.get("content-security-policy")).to.equal(CONTENT_SECURITY_POLICY);
    await client.signIn();
    for (const path of ["/", "/events", `/events/${id}`, "/dead-letters", "/replay-matching?status=dead"]) {
      const answer = await client.request(path);
      expect(answer.status, path).to.equal(200);
      const csp = answer.headers.get("content-security-policy") ?? "";
      expect(csp, path).to.include("script-src 'self'");
      expect(csp, path).to.include("style-src 'self'");
      expect(csp, path).to.not.include("unsafe-inline");
      expect(answer.headers.get("x-frame-options"), path).to.equal("DENY");
      expect(answer.headers.get("x-content-type-options"), path).to.equal("nosniff");
      expect(answer.headers.get("cache-control"), path).to.equal("no-store");
      const scripts = answer.text.match(/<script\b[^>]*>/g) ?? [];
      expect(scripts.length, path).to.equal(1);
      expect(scripts[0], path).to.match(/ src="[^"]+\.js"/);
      expect(answer.text, path).to.not.match(/\sstyle=|<style\b|\son[a-z]+=/i);
    }
  });

  it("logs a refused POST with its path, and without its query (a search typed into the console stays out of the logs)", async () => {
    const lines: Array<Record<string, unknown>> = [];
    const logger = createDefaultLogger("info", {}, { write: (text: string) => void lines.push(JSON.parse(text) as Record<string, unknown>) });
    const logged = await startShop(undefined, { logger });
    try {
      const other = new ConsoleClient(logged.consoleUrl);
      await other.signIn();
      const csrf = await other.csrf();
      const cross = await other.request("/replay-matching?search=alice%40example.com", { form: { _csrf: csrf }, headers: { origin: "https://evil.example" } });
      expect(cross.status).to.equal(403);
      const noToken = await other.request("/replay-matching?search=alice%40example.com", { form: {}, headers: { origin: other.origin, "sec-fetch-site": "same-origin" } });
      expect(noToken.status).to.equal(403);
      const refused = lines.filter((l) => String(l.msg).includes("refused"));
      expect(refused.map((l) => l.path)).to.deep.equal(["/replay-matching", "/replay-matching"]);
      expect(JSON.stringify(lines)).to.not.contain("alice");
    } finally {
      await logged.stop();
    }
  });

  it("refuses cross-site POSTs (403) and POSTs without the session's CSRF token, and changes nothing", async () => {
    const id = await shop.deliver({ order: "o-csrf", fail: true });
    await settled(id, "dead");
    await client.signIn();
    const csrf = await client.csrf();
    const path = `/events/${id}/replay`;
    const cases: Array<[string, Record<string, string>, Record<string, string>]> = [
      ["another site's Origin", { origin: "https://evil.example" }, { _csrf: csrf }],
      ["Sec-Fetch-Site cross-site", { origin: client.origin, "sec-fetch-site": "cross-site" }, { _csrf: csrf }],
      ["Sec-Fetch-Site same-site", { "sec-fetch-site": "same-site" }, { _csrf: csrf }],
      ["an opaque Origin", { origin: "null" }, { _csrf: csrf }],
      ["neither Origin nor Sec-Fetch-Site", {}, { _csrf: csrf }],
      ["no CSRF token", { origin: client.origin, "sec-fetch-site": "same-origin" }, {}],
      ["a wrong CSRF token", { origin: client.origin, "sec-fetch-site": "same-origin" }, { _csrf: "AAAA" }],
    ];
    for (const [what, headers, form] of cases) {
      const answer = await client.request(path, { form, headers });
      expect(answer.status, what).to.equal(403);
    }
    // Another session's token is not this session's.
    const other = new ConsoleClient(shop.consoleUrl);
    await other.signIn();
    const otherToken = await other.csrf();
    expect(otherToken).to.not.equal(csrf);
    expect((await client.post(path, {}, otherToken)).status).to.equal(403);
    expect((await client.post("/tasks/billing/pause", {}, otherToken)).status).to.equal(403);
    expect((await shop.app.events.get(id))?.replays).to.deep.equal([]);
    expect((await shop.app.paused()).includes("billing")).to.equal(false);
    // The same request from the console's page goes through.
    const ok = await client.post(path, {}, csrf);
    expect(ok.status).to.equal(303);
    expect(ok.headers.get("location")).to.match(/\/events\/[^/]+\?notice=replay$/);
  });

  it("escapes what events hold: a <script> in a body, a header or a filter is shown as text", async () => {
    const attack = "<script>alert(1)</script>";
    const id = await shop.deliver({ order: "o-xss", note: attack }, { "x-note": `"><img src=x onerror=alert(2)>` });
    await settled(id, "succeeded");
    await client.signIn();
    const page = await client.request(`/events/${id}`);
    expect(page.status).to.equal(200);
    expect(page.text).to.not.include(attack);
    expect(page.text).to.not.include("<img src=x");
    expect(page.text).to.include("&lt;script&gt;alert(1)&lt;/script&gt;");
    expect(page.text).to.include("&quot;&gt;&lt;img src=x onerror=alert(2)&gt;");
    const list = await client.request(`/events?search=${encodeURIComponent(`"><script>alert(3)</script>`)}`);
    expect(list.text).to.not.include("<script>alert(3)");
    expect(list.text).to.include("&quot;&gt;&lt;script&gt;alert(3)&lt;/script&gt;");
    const missing = await client.request(`/events/${encodeURIComponent("<b>nope</b>")}`);
    expect(missing.status).to.equal(404);
    expect(missing.text).to.include("&lt;b&gt;nope&lt;/b&gt;");
  });

  it("never shows a signature or a credential header's value", async () => {
    const id = await shop.deliver({ order: "o-secret" }, { "x-api-key": "key-value-1234", "x-custom-token": "token-value-5678", "x-shop-session": "session-value-9" }, { token: "query-token-42", sig: "query-sig-43", page: "2" });
    await settled(id, "succeeded");
    await client.signIn();
    const page = await client.request(`/events/${id}`);
    expect(page.text).to.not.match(/sha256=[0-9a-f]{64}/);
    // The history redacts the usual credential headers; the console, more widely, the rest.
    expect(page.text).to.include("x-custom-token").and.include("x-shop-session");
    for (const value of ["key-value-1234", "token-value-5678", "session-value-9", "query-token-42", "query-sig-43", CONSOLE_TOKEN]) expect(page.text).to.not.include(value);
    expect(page.text).to.include("&quot;page&quot;: &quot;2&quot;");
    expect(page.text).to.include("[redacted]");
    expect(page.text).to.include("x-github-event");
  });

  it("lists with every filter as query parameters, paginated with the cursor; a bad filter is a 400 saying why", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await shop.deliver({ order: `o-page-${i}`, fail: i === 2 }));
    await settled(ids[4], "succeeded");
    await settled(ids[2], "dead");
    await client.signIn();
    const event = await shop.app.events.get(ids[0]);
    const source = event?.origin.kind === "webhook" ? event.origin.source : "";
    const first = await client.request(`/events?source=${encodeURIComponent(source)}&task=billing&limit=2`);
    expect(first.status).to.equal(200);
    const rows = (text: string) => [...text.matchAll(/name="id" value="([^"]+)"/g)].map((m) => m[1]);
    expect(rows(first.text)).to.deep.equal([ids[4], ids[3]]);
    const older = /href="([^"]+)" rel="next"|rel="next" href="([^"]+)"/.exec(first.text);
    expect(older, "an Older link").to.not.equal(null);
    const next = (older![1] ?? older![2]).replace(/&amp;/g, "&");
    expect(next).to.include("limit=2").and.include("cursor=").and.include("task=billing");
    const second = await client.request(new URL(next, shop.consoleUrl).pathname + new URL(next, shop.consoleUrl).search);
    expect(rows(second.text)).to.deep.equal([ids[2], ids[1]]);
    const dead = await client.request("/events?status=dead&since=1h");
    expect(rows(dead.text)).to.deep.equal([ids[2]]);
    const search = await client.request(`/events?search=${encodeURIComponent("body.order=o-page-3")}`);
    expect(search.status).to.equal(200);
    for (const [query, message] of [
      ["status=lost", "not one of pending, succeeded, failed, dead, unrouted"],
      ["since=yesterday-ish", "since: &quot;yesterday-ish&quot; is not a time"],
      ["until=2026-02-30", "until: &quot;2026-02-30&quot; is not a time"],
      ["limit=5000", "not a number from 1 to 500"],
      ["task=a&task=b", "task must be given once"],
      ["search=%00", "search must not contain the character U+0000"],
      ["search=body.order%3D%00", "search must not contain the character U+0000"],
      ["source=%00", "source must not contain the character U+0000"],
      ["task=%00", "task must not contain the character U+0000"],
    ]) {
      const answer = await client.request(`/events?${query}`);
      expect(answer.status, query).to.equal(400);
      expect(answer.text, query).to.include(message);
      const dry = await client.request(`/replay-matching?${query}`);
      expect(dry.status, `replay-matching ${query}`).to.equal(400);
      expect(dry.text, `replay-matching ${query}`).to.include(message);
    }
    expect((await client.request("/events/%00")).status).to.equal(404);
  });

  it("replays one dead event by POST /events/<id>/replay: a new event, linked both ways, that succeeds", async () => {
    const id = await shop.deliver({ order: "o-replay", fail: true });
    await settled(id, "dead");
    expect((await shop.app.deadLetters.list()).length).to.equal(1);
    shop.fixed = true;
    await client.signIn();
    const answer = await client.post(`/events/${id}/replay`);
    expect(answer.status).to.equal(303);
    const replayId = decodeURIComponent(/\/events\/([^/?]+)\?notice=replay$/.exec(answer.headers.get("location") ?? "")![1]);
    await settled(replayId, "succeeded");
    expect((await shop.app.events.get(replayId))?.replayOf).to.equal(id);
    expect((await shop.app.events.get(id))?.replays).to.deep.equal([replayId]);
    expect(await shop.app.deadLetters.list()).to.deep.equal([]);
    const page = await client.request(new URL(answer.headers.get("location")!, shop.consoleUrl).pathname + "?notice=replay");
    expect(page.text).to.include("Replay queued");
    expect(page.text).to.include(`href="/events/${encodeURIComponent(id)}"`);
  });

  it("lists unrouted events with the status filter, and replays one once a task takes such events", async () => {
    const routed = await shop.deliver({ order: "o-routed" });
    const answer = await shop.send({ note: "no order in it" });
    expect(answer.status).to.equal(200);
    expect(answer.json).to.include({ accepted: true, routed: false });
    const id = await eventually(async () => (await shop.app.events.list({ status: "unrouted" })).events[0]?.id, 5_000, "the unrouted event in the history");
    await client.signIn();
    const rows = (text: string) => [...text.matchAll(/name="id" value="([^"]+)"/g)].map((m) => m[1]);
    const list = await client.request("/events?status=unrouted");
    expect(list.status).to.equal(200);
    expect(rows(list.text)).to.deep.equal([id]);
    expect(list.text).to.include('<option value="unrouted" selected>').and.include("badge-unrouted");
    expect(rows((await client.request("/events")).text)).to.include.members([id, routed]);
    const page = await client.request(`/events/${id}`);
    expect(page.text).to.include("no order in it").and.include("badge-unrouted");
    // Still no task takes it: refused, saying why.
    const refused = await client.post(`/events/${id}/replay`);
    expect(refused.status).to.equal(400);
    expect(refused.text).to.include("it was unrouted (no task took it)");
    shop.takesAll = true;
    const replayed = await client.post(`/events/${id}/replay`);
    expect(replayed.status).to.equal(303);
    const replayId = decodeURIComponent(/\/events\/([^/?]+)\?notice=replay$/.exec(replayed.headers.get("location") ?? "")![1]);
    await settled(replayId, "succeeded");
    expect((await shop.app.events.get(replayId))?.deliveries.map((d) => d.task)).to.deep.equal(["billing"]);
    expect((await shop.app.events.get(id))?.replays).to.deep.equal([replayId]);
  });

  it("replays selected events, and all events matching a filter after a dry-run count", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push(await shop.deliver({ order: `o-bulk-${i}`, fail: i % 2 === 0 }));
    await settled(ids[0], "dead");
    await settled(ids[2], "dead");
    await settled(ids[3], "succeeded");
    shop.fixed = true;
    await client.signIn();
    const selected = await client.post("/replay", { id: [ids[1], ids[3]], back: "/events?task=billing" });
    expect(selected.status).to.equal(303);
    expect(selected.headers.get("location")).to.equal("/events?task=billing&replayed=2");
    for (const id of [ids[1], ids[3]]) expect((await shop.app.events.get(id))?.replays).to.have.length(1);
    const dry = await client.request("/replay-matching?status=dead&task=billing");
    expect(dry.status).to.equal(200);
    expect(dry.text).to.match(/<strong class="count">2<\/strong>/);
    expect((await shop.app.events.get(ids[0]))?.replays, "a dry run queues nothing").to.deep.equal([]);
    const run = await client.post("/replay-matching", { status: "dead", task: "billing", ratePerSecond: "20" });
    expect(run.status).to.equal(303);
    expect(run.headers.get("location")).to.include("started=1");
    for (const id of [ids[0], ids[2]]) {
      const replay = await eventually(async () => (await shop.app.events.get(id))?.replays[0], 5_000, `a replay of ${id}`);
      await settled(replay, "succeeded");
    }
    // As for one replay: the dead letters the replays supersede are gone (left, a click would run them again).
    await eventually(async () => ((await shop.app.deadLetters.list()).length === 0 ? true : undefined), 5_000, "the replayed dead letters discarded");
    // Everything at once needs its own confirmation.
    const everything = await client.post("/replay-matching", {});
    expect(everything.status).to.equal(400);
    expect(everything.text).to.include("matches every event");
  });

  it("pauses and resumes a task with POSTs; the overview says which", async () => {
    await client.signIn();
    expect((await client.post("/tasks/billing/pause")).status).to.equal(303);
    expect((await shop.app.paused()).includes("billing")).to.equal(true);
    const id = await shop.deliver({ order: "o-paused" });
    const overview = await client.request("/");
    expect(overview.text).to.match(/badge-paused">paused<\/span> <button type="submit">Resume/);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect((await shop.app.events.get(id))?.status).to.equal("pending");
    expect((await client.post("/tasks/billing/resume")).status).to.equal(303);
    await settled(id, "succeeded");
    expect((await client.post("/tasks/nope/pause")).status).to.equal(404);
  });

  it("shows the dead letters, and discards one by POST", async () => {
    const id = await shop.deliver({ order: "o-dead", fail: true });
    await settled(id, "dead");
    await client.signIn();
    const page = await client.request("/dead-letters");
    expect(page.text).to.include("card declined for order o-dead");
    const [letter] = await shop.app.deadLetters.list();
    const answer = await client.post(`/dead-letters/${encodeURIComponent(letter.message.id)}/discard`);
    expect(answer.status).to.equal(303);
    expect(await shop.app.deadLetters.list()).to.deep.equal([]);
  });

  it("answers 429 to an address after ten wrong tokens in a minute, even with the right one", async () => {
    for (let i = 0; i < 10; i++) {
      const wrong = await client.request("/", { headers: { authorization: `Bearer wrong-token-number-${i}-000000` } });
      expect(wrong.status).to.equal(401);
    }
    const right = await client.request("/", { headers: { authorization: `Bearer ${CONSOLE_TOKEN}` } });
    expect(right.status).to.equal(429);
    expect(Number(right.headers.get("retry-after"))).to.be.within(1, 60);
    expect((await client.signIn()).status).to.equal(429);
    // A request without credentials is no attempt: the sign-in page still shows.
    expect((await client.request("/login")).status).to.equal(200);
  });

  it("logs wrong tokens from many addresses at most ten a second, and counts the rest in one line", async () => {
    const lines: LogLine[] = [];
    // Behind a trusted proxy every request names another client: 300 addresses, none throttled.
    const many = await startShop(undefined, { logger: recordingLogger(lines), trustProxy: "loopback" });
    try {
      const guesser = new ConsoleClient(many.consoleUrl);
      const started = Date.now();
      for (let i = 0; i < 300; i++) {
        const wrong = await guesser.request("/", { headers: { authorization: `Bearer wrong-token-number-${i}-000000`, "x-forwarded-for": `198.51.${Math.floor(i / 250)}.${i % 250}` } });
        expect(wrong.status).to.equal(401);
      }
      const seconds = Math.ceil((Date.now() - started) / 1000);
      const refused = () => lines.filter((l) => l.msg === "console: sign-in refused (a wrong Authorization header)").length;
      const counted = () => lines.filter((l) => l.msg.startsWith("console: ") && l.msg.includes("more sign-ins refused")).reduce((n, l) => n + Number(l.fields?.suppressed), 0);
      // One line per request before: 300 lines.
      expect(refused(), `${refused()} lines in ${seconds} s`).to.be.at.most(10 * (seconds + 1));
      await eventually(async () => (refused() + counted() === 300 ? true : undefined), 3_000, "every refusal logged or counted");
    } finally {
      await many.stop();
    }
  });

  it("sends back only to the console's own pages after signing in", async () => {
    for (const next of ["//evil.example/", "https://evil.example/", "/\\evil.example", "javascript:alert(1)"]) {
      const answer = await new ConsoleClient(shop.consoleUrl).request("/login", { form: { token: CONSOLE_TOKEN, next }, headers: { origin: client.origin } });
      expect(answer.status, next).to.equal(303);
      expect(answer.headers.get("location"), next).to.equal("/");
    }
  });

  it("serves its script and stylesheet, together under 50 KB gzipped, cached for good", async () => {
    const page = await client.request("/login");
    const assets = [...page.text.matchAll(/(?:src|href)="([^"]*\/assets\/[^"]+\.(?:css|js))"/g)].map((m) => m[1]);
    expect(assets).to.have.length(2);
    let gzipped = 0;
    for (const asset of assets) {
      const res = await fetch(new URL(asset, shop.consoleUrl), { headers: { "accept-encoding": "gzip" } });
      expect(res.status).to.equal(200);
      expect(res.headers.get("cache-control")).to.include("immutable");
      expect(res.headers.get("content-encoding")).to.equal("gzip");
      gzipped += Number(res.headers.get("content-length"));
      await res.arrayBuffer();
    }
    expect(gzipped).to.be.greaterThan(500).and.lessThan(50 * 1024);
  });
});
