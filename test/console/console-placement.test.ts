import { createServer, type AddressInfo } from "node:net";
import { expect } from "chai";
import { CoreApp, ListenError, silentLogger, WebhookSource } from "../../src/index";
import { ConsoleClient } from "./console-client";
import { CONSOLE_TOKEN, eventually } from "./shop-app";

describe("console placement and refusals", function () {
  this.timeout(20_000);
  const apps: CoreApp[] = [];
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.stop({ timeoutMs: 1_000 })));
  });
  const make = (options: ConstructorParameters<typeof CoreApp>[1], source?: WebhookSource): CoreApp => {
    const app = new CoreApp("placed", { store: "memory", logger: silentLogger, ...options });
    app.task({ source: source ?? new WebhookSource({ path: "/hooks/a", host: "127.0.0.1", port: 0 }), name: "a" }, async () => undefined);
    apps.push(app);
    return app;
  };

  it("refuses at start a console on a non-loopback host without auth, and listens on nothing", async () => {
    const source = new WebhookSource({ path: "/hooks/a", host: "127.0.0.1", port: 0 });
    const app = make({ console: { host: "0.0.0.0", port: 0 } }, source);
    let error: unknown;
    await app.start().catch((e: unknown) => (error = e));
    expect(String(error)).to.include("reachable from other machines without authentication").and.include("console.auth");
    expect(app.running).to.equal(false);
    const withAuth = make({ console: { host: "0.0.0.0", port: 0, auth: { token: CONSOLE_TOKEN } } });
    await withAuth.start();
    const res = await fetch(withAuth.consoleUrl!.replace("0.0.0.0", "127.0.0.1"));
    expect(res.status).to.equal(401);
    await res.text();
  });

  it("says that it is the console's port that is taken, and what to change", async () => {
    // What a second app with `console: true` meets: another app's console holds the port.
    const other = createServer();
    await new Promise<void>((resolve) => other.listen(0, "127.0.0.1", resolve));
    const busy = (other.address() as AddressInfo).port;
    try {
      for (const option of [{ port: busy }, { host: "127.0.0.1", port: busy }]) {
        const app = make({ console: option });
        let error: unknown;
        await app.start().catch((e: unknown) => (error = e));
        expect(error, JSON.stringify(option)).to.be.instanceOf(ListenError);
        expect(String(error)).to.include(`the console cannot listen on 127.0.0.1:${busy}: the address is already in use`).and.include("give console.port another port, or 0 for a free one");
        expect(app.running).to.equal(false);
      }
      // A webhook source's clash keeps its own words.
      const hooks = make({}, new WebhookSource({ path: "/hooks/a", host: "127.0.0.1", port: busy }));
      let error: unknown;
      await hooks.start().catch((e: unknown) => (error = e));
      expect(String(error)).to.include(`cannot listen on 127.0.0.1:${busy}: the address is already in use`).and.not.include("console");
    } finally {
      await new Promise((resolve) => other.close(resolve));
    }
  });

  it("checks its options when the app is made", () => {
    const bad: Array<[unknown, string]> = [
      [{ port: 70000 }, "console.port must be an integer from 0 to 65535"],
      [{ path: "console" }, 'console.path must be a path beginning with "/"'],
      [{ auth: { token: "short" } }, "at least 16 characters"],
      [{ auth: { token: `${CONSOLE_TOKEN}\n` } }, "console.auth.token must not hold spaces, line breaks or control characters"],
      [{ auth: { token: " ".repeat(20) } }, "console.auth.token must not hold spaces"],
      [{ auth: { token: CONSOLE_TOKEN, username: "a", password: "b" } }, "not both"],
      [{ auth: { username: "ops", password: "short" } }, "console.auth.password must be a string of at least 12 characters"],
      [{ auth: {} }, "console.auth must be { token } or { username, password }"],
      [{ prot: 9400 }, "console.prot is not an option"],
      ["yes", "console must be true, false or { host, port, path, auth }"],
    ];
    for (const [option, message] of bad) {
      expect(() => new CoreApp("bad", { console: option as never }), JSON.stringify(option)).to.throw(TypeError, message);
    }
  });

  it("does not take a webhook source's listener unasked, and refuses webhook paths that hide its pages", async () => {
    const onDefault = make({ console: true }, new WebhookSource({ path: "/hooks/a", host: "127.0.0.1", port: 9400 }));
    let error: unknown;
    await onDefault.start().catch((e: unknown) => (error = e));
    expect(String(error)).to.include("the console's address 127.0.0.1:9400 is a webhook source's listener").and.include("only when console.host and console.port both name it");
    const colliding = make({ console: { host: "127.0.0.1", port: 0, path: "/console", auth: { token: CONSOLE_TOKEN } } }, new WebhookSource({ path: "/console/events", host: "127.0.0.1", port: 0 }));
    error = undefined;
    await colliding.start().catch((e: unknown) => (error = e));
    expect(String(error)).to.include("route conflict on 127.0.0.1:0: webhook path /console/events would hide the console's pages");
    // The path it suggests is free, not the one refused.
    expect(String(error)).to.include('give console.path another value (e.g. "/_console")');
    // check() (and `webhook-tasks check`) says the same without starting anything.
    expect(() => colliding.check()).to.throw("webhook path /console/events would hide the console's pages");
    expect(() => make({ console: { host: "::", port: 0 } }).check()).to.throw("reachable from other machines without authentication");
  });

  it("shares a webhook source's listener under its path when told that host and port", async () => {
    const source = new WebhookSource({ path: "/hooks/a", host: "127.0.0.1", port: 0 });
    const app = make({ console: { host: "127.0.0.1", port: 0, path: "/console", auth: { token: CONSOLE_TOKEN } } }, source);
    await app.start();
    expect(app.consoleUrl).to.equal(`${new URL(source.url).origin}/console/`);
    const page = await fetch(app.consoleUrl!, { headers: { authorization: `Bearer ${CONSOLE_TOKEN}` } });
    expect(page.status).to.equal(200);
    expect(await page.text()).to.include('href="/console/events"');
    // Its path is exact, as its pages are; an unknown page is the console's own 404, with its headers.
    const upper = await fetch(`${new URL(source.url).origin}/CONSOLE/`, { headers: { authorization: `Bearer ${CONSOLE_TOKEN}` } });
    expect(upper.status).to.equal(404);
    expect(upper.headers.get("content-security-policy")).to.equal(null);
    await upper.text();
    const unknown = await fetch(`${app.consoleUrl!}nope`, { headers: { authorization: `Bearer ${CONSOLE_TOKEN}` } });
    expect(unknown.status).to.equal(404);
    expect(unknown.headers.get("content-security-policy")).to.include("default-src");
    expect(unknown.headers.get("cache-control")).to.equal("no-store");
    await unknown.text();
    const hook = await fetch(source.url, { method: "POST", body: "{}", headers: { "content-type": "application/json" } });
    expect(hook.status).to.equal(202);
    await hook.text();
  });

  it("on its own listener, answers an unknown page with its own 404 and the pages' headers", async () => {
    const app = make({ console: { port: 0, auth: { token: CONSOLE_TOKEN } } });
    await app.start();
    for (const path of ["nope", "favicon.ico"]) {
      const answer = await fetch(`${app.consoleUrl!}${path}`, { headers: { authorization: `Bearer ${CONSOLE_TOKEN}` } });
      expect(answer.status, path).to.equal(404);
      expect(answer.headers.get("content-security-policy"), path).to.include("default-src");
      expect(answer.headers.get("cache-control"), path).to.equal("no-store");
      expect(await answer.text()).to.include("no such page in the console");
    }
  });

  it("at / on a webhook source's listener, leaves the senders' 404 (JSON) to the listener", async () => {
    const source = new WebhookSource({ path: "/hooks/a", host: "127.0.0.1", port: 0 });
    const app = make({ console: { host: "127.0.0.1", port: 0, path: "/", auth: { token: CONSOLE_TOKEN } } }, source);
    await app.start();
    const typo = await fetch(`${new URL(source.url).origin}/hooks/typo`, { method: "POST", body: "{}", headers: { "content-type": "application/json" } });
    expect(typo.status).to.equal(404);
    expect(((await typo.json()) as { error: string }).error).to.equal("not_found");
    const page = await fetch(app.consoleUrl!, { headers: { authorization: `Bearer ${CONSOLE_TOKEN}` } });
    expect(page.status).to.equal(200);
    await page.text();
  });

  it("with basic authentication: a challenge without credentials, pages and actions with them", async () => {
    const app = make({ console: { port: 0, auth: { username: "ops", password: "a-long-password" } } });
    await app.start();
    const url = app.consoleUrl!;
    const none = await fetch(url);
    expect(none.status).to.equal(401);
    expect(none.headers.get("www-authenticate")).to.match(/^Basic realm="webhook-tasks console"/);
    await none.text();
    const wrong = await fetch(url, { headers: { authorization: `Basic ${Buffer.from("ops:wrong-password!").toString("base64")}` } });
    expect(wrong.status).to.equal(401);
    await wrong.text();
    const authorization = `Basic ${Buffer.from("ops:a-long-password").toString("base64")}`;
    const page = await fetch(url, { headers: { authorization } });
    expect(page.status).to.equal(200);
    const csrf = /name="_csrf" value="([^"]+)"/.exec(await page.text())![1];
    const origin = new URL(url).origin;
    const post = (token: string) =>
      fetch(`${url}tasks/a/pause`, { method: "POST", redirect: "manual", headers: { authorization, origin, "content-type": "application/x-www-form-urlencoded" }, body: `_csrf=${encodeURIComponent(token)}` });
    expect((await post("wrong")).status).to.equal(403);
    expect((await post(csrf)).status).to.equal(303);
    expect((await app.paused()).includes("a")).to.equal(true);
  });

  it("says so when the app keeps no history, and still shows the overview and the dead letters", async () => {
    const app = make({ history: false, console: { port: 0, auth: { token: CONSOLE_TOKEN } } });
    await app.start();
    const get = (path: string) => fetch(new URL(path, app.consoleUrl), { headers: { authorization: `Bearer ${CONSOLE_TOKEN}` } }).then(async (res) => ({ status: res.status, text: await res.text() }));
    const events = await get("events");
    expect(events.status).to.equal(404);
    expect(events.text).to.include("This app keeps no event history");
    const overview = await get("");
    expect(overview.status).to.equal(200);
    expect(overview.text).to.include("keeps no event history");
    expect((await get("dead-letters")).status).to.equal(200);
  });

  it("replays an event to one of the tasks it was handed to, and says why it refuses another", async () => {
    const source = new WebhookSource({ path: "/hooks/orders", host: "127.0.0.1", port: 0 });
    const app = new CoreApp("fan", { store: "memory", logger: silentLogger, console: { port: 0, auth: { token: CONSOLE_TOKEN } } });
    app.task({ source, name: "invoice" }, async () => "invoiced");
    app.task({ source, name: "ship" }, async () => "shipped");
    apps.push(app);
    await app.start();
    const accepted = await fetch(source.url, { method: "POST", body: '{"order":1}', headers: { "content-type": "application/json" } });
    const { id } = (await accepted.json()) as { id: string };
    await eventually(async () => ((await app.events.get(id))?.status === "succeeded" ? true : undefined), 5_000, "both deliveries");
    const client = new ConsoleClient(app.consoleUrl!, CONSOLE_TOKEN);
    const page = await client.request(`/events/${id}`);
    expect(page.text).to.include("Replay to invoice").and.include("Replay to ship");
    const one = await client.post(`/events/${id}/replay`, { task: "ship" });
    expect(one.status).to.equal(303);
    const replayId = decodeURIComponent(/\/events\/([^/?]+)\?notice=replay$/.exec(one.headers.get("location") ?? "")![1]);
    expect((await app.events.get(replayId))?.deliveries.map((d) => d.task)).to.deep.equal(["ship"]);
    const refused = await client.post(`/events/${id}/replay`, { task: "nope" });
    expect(refused.status).to.equal(400);
    expect(refused.text).to.include("Replay refused").and.include("nope");
    expect((await app.events.get(id))?.replays).to.deep.equal([replayId]);
  });

  it("without auth, answers only to a loopback Host (no DNS rebinding)", async () => {
    const app = make({ console: { port: 0 } });
    await app.start();
    const url = new URL(app.consoleUrl!);
    const { request } = await import("node:http");
    const get = (host: string) =>
      new Promise<number>((resolve, reject) => {
        const req = request({ host: "127.0.0.1", port: url.port, path: "/", headers: { host } }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on("error", reject);
        req.end();
      });
    expect(await get(`127.0.0.1:${url.port}`)).to.equal(200);
    expect(await get(`localhost:${url.port}`)).to.equal(200);
    expect(await get(`attacker.example:${url.port}`)).to.equal(403);
  });
});
