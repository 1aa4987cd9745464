import { expect } from "chai";
import { MemoryStore } from "../../src/index";
import { ConsoleClient } from "./console-client";
import { CONSOLE_TOKEN, eventually, startShop, type ShopApp } from "./shop-app";

/** Refusals and lockouts found by review: each was a 500, a lockout or a dead button. */
describe("console: refusals and lockouts", function () {
  this.timeout(20_000);
  let shop: ShopApp | undefined;
  afterEach(async () => {
    await shop?.stop();
    shop = undefined;
  });

  it("answers 400, not 500, to a time too large to be one, on the bulk replay's page and form", async () => {
    shop = await startShop();
    const client = new ConsoleClient(shop.consoleUrl);
    await client.signIn();
    const huge = "9".repeat(400);
    for (const query of [`since=${huge}`, `until=${huge}d`, `status=dead&since=${huge}h`]) {
      const page = await client.request(`/replay-matching?${query}`);
      expect(page.status, query).to.equal(400);
      expect(page.text, query).to.include("is not a time");
      const list = await client.request(`/events?${query}`);
      expect(list.status, query).to.equal(400);
    }
    const posted = await client.post("/replay-matching", { status: "dead", since: `${huge}d`, ratePerSecond: "5" });
    expect(posted.status).to.equal(400);
    expect(posted.text).to.include("is not a time");
  });

  it("keeps a signed-in browser working while someone else at its address guesses tokens", async () => {
    shop = await startShop();
    const user = new ConsoleClient(shop.consoleUrl);
    await user.signIn();
    const attacker = new ConsoleClient(shop.consoleUrl);
    for (let i = 0; i < 12; i++) await attacker.request("/", { headers: { authorization: `Bearer wrong-guess-${i}-0000000000` } });
    expect((await attacker.request("/", { headers: { authorization: `Bearer ${CONSOLE_TOKEN}` } })).status).to.equal(429);
    // The session cookie is no guess: its owner is not locked out.
    expect((await user.request("/")).status).to.equal(200);
    expect((await user.post("/tasks/billing/pause")).status).to.equal(303);
  });

  it("counts a Bearer token tried at the sign-in page as on every page: no unthrottled way to tell a right one", async () => {
    shop = await startShop();
    const guesser = new ConsoleClient(shop.consoleUrl);
    for (let i = 0; i < 10; i++) {
      const wrong = await guesser.request("/login", { headers: { authorization: `Bearer wrong-guess-${i}-0000000000` } });
      expect(wrong.status).to.equal(200);
    }
    // Past ten wrong ones, the right token is refused too, at the sign-in page and everywhere else.
    const right = await guesser.request("/login", { headers: { authorization: `Bearer ${CONSOLE_TOKEN}` } });
    expect(right.status).to.equal(429);
    expect(right.headers.get("location")).to.equal(null);
    expect((await guesser.request("/", { headers: { authorization: `Bearer ${CONSOLE_TOKEN}` } })).status).to.equal(429);
    // A visitor without credentials still gets the sign-in page.
    expect((await guesser.request("/login")).status).to.equal(200);
  });

  it("counts wrong tokens per client behind a trusted proxy (trustProxy), and never trusts X-Forwarded-For otherwise", async () => {
    shop = await startShop(undefined, { trustProxy: "loopback" });
    const client = new ConsoleClient(shop.consoleUrl);
    const from = (address: string, token: string) => client.request("/", { headers: { authorization: `Bearer ${token}`, "x-forwarded-for": address } });
    for (let i = 0; i < 12; i++) await from("203.0.113.9", `wrong-guess-${i}-0000000000`);
    expect((await from("203.0.113.9", CONSOLE_TOKEN)).status).to.equal(429);
    // Another client behind the same proxy is not locked out by the first one's guesses.
    expect((await from("203.0.113.10", CONSOLE_TOKEN)).status).to.equal(200);
    await shop.stop();

    // Without trustProxy, a guesser cannot escape the count by naming another address each time.
    shop = await startShop();
    const direct = new ConsoleClient(shop.consoleUrl);
    for (let i = 0; i < 12; i++) {
      await direct.request("/", { headers: { authorization: `Bearer wrong-guess-${i}-0000000000`, "x-forwarded-for": `198.51.100.${i}` } });
    }
    const right = await direct.request("/", { headers: { authorization: `Bearer ${CONSOLE_TOKEN}`, "x-forwarded-for": "198.51.100.200" } });
    expect(right.status).to.equal(429);
  });

  it("replays a dead letter from its page in an app without a history", async () => {
    shop = await startShop(undefined, { history: false });
    const s = shop;
    await s.deliver({ order: "o-dead", fail: true });
    await eventually(async () => ((await s.app.deadLetters.list()).length === 1 ? true : undefined), 5_000, "the dead letter");
    const client = new ConsoleClient(s.consoleUrl);
    await client.signIn();
    const page = await client.request("/dead-letters");
    expect(page.status).to.equal(200);
    // No link to an event page that cannot exist.
    expect(page.text).to.not.match(/href="\/events\//);
    const action = /<form method="post" action="([^"]+)" class="inline"><input type="hidden" name="_csrf" value="[^"]+">(?:<input type="hidden" name="task" value="billing">)?<button type="submit">Replay<\/button>/.exec(page.text);
    expect(action, "the Replay form").to.not.equal(null);
    const csrf = /name="_csrf" value="([^"]+)"/.exec(page.text)![1];
    s.fixed = true;
    const answer = await client.post(action![1].replace(/&amp;/g, "&"), { task: "billing" }, csrf);
    expect(answer.status, answer.text).to.equal(303);
    await eventually(async () => ((await s.app.deadLetters.list()).length === 0 && (await s.app.status()).queues.every((q) => q.depth === 0) ? true : undefined), 5_000, "the replayed letter to run");
    const after = await client.request((answer.headers.get("location") ?? "/").replace(new URL(s.consoleUrl).pathname.replace(/\/$/, ""), ""));
    expect(after.text).to.include("No dead letters.");
  });

  it("never shows a header whose name says it carries a key", async () => {
    shop = await startShop();
    const s = shop;
    const id = await s.deliver({ order: "o-keys" }, { "x-webhook-key": "webhook-key-value-1", "x-functions-key": "functions-key-value-2", "ocp-apim-subscription-key": "apim-key-value-3", "idempotency-key": "idem-visible-4" });
    await eventually(async () => ((await s.app.events.get(id))?.status === "succeeded" ? true : undefined), 5_000, "the event");
    const client = new ConsoleClient(s.consoleUrl);
    await client.signIn();
    const page = await client.request(`/events/${id}`);
    for (const value of ["webhook-key-value-1", "functions-key-value-2", "apim-key-value-3"]) expect(page.text).to.not.include(value);
    // An idempotency key is no credential: it is what one looks for.
    expect(page.text).to.include("idem-visible-4");
  });

  it("keeps a session when a proxy in front adds its own basic Authorization header", async () => {
    shop = await startShop();
    const client = new ConsoleClient(shop.consoleUrl);
    const proxyAuth = { authorization: `Basic ${Buffer.from("ops:proxy-password").toString("base64")}` };
    const signIn = await client.request("/login", { form: { token: CONSOLE_TOKEN, next: "/" }, headers: { origin: client.origin, "sec-fetch-site": "same-origin", ...proxyAuth } });
    expect(signIn.status).to.equal(303);
    client.cookie = signIn.headers.get("set-cookie")!.split(";")[0];
    for (let i = 0; i < 12; i++) expect((await client.request("/", { headers: proxyAuth })).status, `page view ${i}`).to.equal(200);
    // Without the cookie, the proxy's header is neither a session nor a wrong token: the sign-in page, never a lockout.
    const anonymous = new ConsoleClient(shop.consoleUrl);
    for (let i = 0; i < 12; i++) expect((await anonymous.request("/", { headers: proxyAuth })).status).to.equal(401);
  });
  it("refuses a bulk replay to a task the app does not have (400) rather than start one that fails", async () => {
    shop = await startShop();
    const client = new ConsoleClient(shop.consoleUrl);
    await client.signIn();
    await shop.deliver({ order: "o-task", fail: true });
    const posted = await client.post("/replay-matching", { status: "dead", replayTask: "no-such-task" });
    expect(posted.status).to.equal(400);
    expect(posted.text).to.include("no task &quot;no-such-task&quot;");
    // Nothing was started: the page lists no bulk replay.
    expect((await client.request("/replay-matching?status=dead")).text).to.not.include("Bulk replays");
  });

  it("refuses a second bulk replay while one runs: a resent form replays nothing twice", async () => {
    shop = await startShop();
    const s = shop;
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push(await s.deliver({ order: `o-bulk-${i}`, fail: true }));
    await eventually(async () => ((await s.app.deadLetters.list()).length === 4 ? true : undefined), 5_000, "the dead letters");
    const client = new ConsoleClient(s.consoleUrl);
    await client.signIn();
    const csrf = await client.csrf();
    const first = await client.post("/replay-matching", { status: "dead", task: "billing", ratePerSecond: "1" }, csrf);
    expect(first.status).to.equal(303);
    const again = await client.post("/replay-matching", { status: "dead", task: "billing", ratePerSecond: "1" }, csrf);
    expect(again.status).to.equal(409);
    expect(again.text).to.include("still running");
    await eventually(async () => ((await Promise.all(ids.map((id) => s.app.events.get(id)))).every((e) => (e?.replays.length ?? 0) >= 1) ? true : undefined), 10_000, "every replay");
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    for (const id of ids) expect((await s.app.events.get(id))?.replays, id).to.have.length(1);
  });
  it("replays a dead letter from its page when its event was pruned from the history", async () => {
    const store = new MemoryStore();
    shop = await startShop(undefined, { store });
    const s = shop;
    const id = await s.deliver({ order: "o-old", fail: true });
    await eventually(async () => ((await s.app.deadLetters.list()).length === 1 ? true : undefined), 5_000, "the dead letter");
    // The history keeps events for days (or a count); dead letters stay until handled.
    await store.history!.prune(Date.now() + 1);
    expect(await s.app.events.get(id)).to.equal(undefined);
    const client = new ConsoleClient(s.consoleUrl);
    await client.signIn();
    const page = await client.request("/dead-letters");
    const action = /<form method="post" action="([^"]+)" class="inline"><input type="hidden" name="_csrf" value="[^"]+">(?:<input type="hidden" name="task" value="billing">)?<button type="submit">Replay<\/button>/.exec(page.text);
    expect(action, "the Replay form").to.not.equal(null);
    s.fixed = true;
    const answer = await client.post(action![1], { task: "billing" }, /name="_csrf" value="([^"]+)"/.exec(page.text)![1]);
    expect(answer.status, answer.text).to.equal(303);
    await eventually(async () => ((await s.app.deadLetters.list()).length === 0 && (await s.app.status()).queues.every((q) => q.depth === 0) ? true : undefined), 5_000, "the letter to run");
    // With its event still in the history, a dead letter's Replay is a replay of the event, linked to it.
    s.fixed = false;
    const kept = await s.deliver({ order: "o-kept", fail: true });
    await eventually(async () => ((await s.app.deadLetters.list()).length === 1 ? true : undefined), 5_000, "the second dead letter");
    s.fixed = true;
    const again = await client.request("/dead-letters");
    const form = /<form method="post" action="([^"]+)" class="inline"><input type="hidden" name="_csrf" value="([^"]+)">(?:<input type="hidden" name="task" value="billing">)?<button type="submit">Replay<\/button>/.exec(again.text)!;
    const replayed = await client.post(form[1], { task: "billing" }, form[2]);
    expect(replayed.status).to.equal(303);
    expect(replayed.headers.get("location")).to.match(/\/events\/[^/]+\?notice=replay$/);
    expect((await s.app.events.get(kept))?.replays).to.have.length(1);
    expect(await s.app.deadLetters.list()).to.deep.equal([]);
  });
});
