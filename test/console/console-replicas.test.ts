import { expect } from "chai";
import { CoreApp, silentLogger } from "../../src/index";
import { postJson } from "../helpers/http-client";
import { webhook } from "../helpers/app";
import { PostgresFixture } from "../store/postgres/postgres-fixture";
import { ConsoleClient } from "./console-client";
import { CONSOLE_TOKEN, eventually } from "./shop-app";

describe("console on PostgreSQL: two replicas, one history", function () {
  this.timeout(40_000);
  const fixture = new PostgresFixture();
  const apps: CoreApp[] = [];
  afterEach(async () => {
    for (const app of apps.splice(0)) await app.stop({ timeoutMs: 2_000 });
    await fixture.cleanup();
  });

  async function replica(schema: string): Promise<{ app: CoreApp; hook: string; console: ConsoleClient }> {
    const app = new CoreApp("replicas", { store: `${fixture.url}?schema=${schema}` as `postgres://${string}`, logger: silentLogger, console: { port: 0, auth: { token: CONSOLE_TOKEN } } });
    const source = webhook({ path: "/hook" });
    app.task({ source, name: "receive", concurrency: 2 }, async () => "done");
    apps.push(app);
    await app.start();
    return { app, hook: source.url, console: new ConsoleClient(app.consoleUrl!, CONSOLE_TOKEN) };
  }

  it("lists, shows and replays from one replica's console an event the other accepted", async function () {
    const schema = fixture.schema();
    const a = await replica(schema);
    const b = await replica(schema);
    if (a.app.store.history === undefined) {
      // This build's PostgreSQL store keeps no history yet: nothing to show across replicas.
      console.warn("    the PostgreSQL store of this build keeps no event history: the replicas' console test is skipped");
      this.skip();
    }
    const reply = await postJson(a.hook, { order: "o-41" }, { "x-request-id": "from-replica-a" });
    expect(reply.status).to.equal(202);
    const id = reply.json<{ id: string }>().id;

    // B's console lists it (searched by a header value) and shows it, settled, as A received it.
    const listed = await eventually(async () => {
      const page = await b.console.request("/events?search=from-replica-a&status=succeeded");
      return page.text.includes(`value="${id}"`) ? page : undefined;
    }, 10_000, "the event in B's list");
    expect(listed.status).to.equal(200);
    const shown = await b.console.request(`/events/${encodeURIComponent(id)}`);
    expect(shown.status).to.equal(200);
    expect(shown.text).to.include("&quot;order&quot;: &quot;o-41&quot;").and.include("from-replica-a");

    // B's console replays it; A's console shows the replay settled, linked to the original.
    const replayed = await b.console.post(`/events/${encodeURIComponent(id)}/replay`);
    expect(replayed.status).to.equal(303);
    const replayId = decodeURIComponent(/\/events\/([^/?]+)\?notice=replay$/.exec(replayed.headers.get("location") ?? "")![1]);
    const onA = await eventually(async () => {
      const page = await a.console.request(`/events/${encodeURIComponent(replayId)}`);
      return page.status === 200 && page.text.includes('class="badge badge-succeeded">succeeded</span><span class="spacer">') ? page : undefined;
    }, 10_000, "the replay settled on A's console");
    expect(onA.text).to.include(`href="/events/${encodeURIComponent(id)}"`);
    expect((await a.app.events.get(id))?.replays).to.deep.equal([replayId]);
  });

  it("refuses a bulk replay on one replica's console while another replica's runs: a form resent through a load balancer replays nothing twice", async () => {
    const schema = fixture.schema();
    const a = await replica(schema);
    const b = await replica(schema);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const reply = await postJson(a.hook, { order: `o-bulk-${i}` }, { "x-request-id": `bulk-${i}` });
      expect(reply.status).to.equal(202);
      ids.push(reply.json<{ id: string }>().id);
    }
    await eventually(async () => ((await b.app.events.list({ status: "succeeded" })).events.length === 3 ? true : undefined), 10_000, "three events settled");
    const until = new Date(Date.now() + 1).toISOString();
    const form = { source: "hook", until, ratePerSecond: "2" };
    const first = await a.console.post("/replay-matching", form, await a.console.csrf("/replay-matching?source=hook"));
    expect(first.status).to.equal(303);
    const onB = await b.console.post("/replay-matching", form, await b.console.csrf("/replay-matching?source=hook"));
    expect(onB.status, "B refuses while A's runs").to.equal(409);
    expect(onB.text).to.include("still running");
    await eventually(async () => ((await Promise.all(ids.map((id) => b.app.events.get(id)))).every((e) => (e?.replays.length ?? 0) >= 1) ? true : undefined), 10_000, "every replay");
    // A's is done: B takes the next one.
    const next = await eventually(async () => {
      const answer = await b.console.post("/replay-matching", { ...form, ratePerSecond: "100" }, await b.console.csrf("/replay-matching?source=hook"));
      return answer.status === 303 ? answer : undefined;
    }, 5_000, "B starting a bulk replay once A's ended");
    expect(next.status).to.equal(303);
    await eventually(async () => ((await Promise.all(ids.map((id) => a.app.events.get(id)))).every((e) => e?.replays.length === 2) ? true : undefined), 10_000, "the second round of replays");
  });

  it("takes one replica's session on the other, and once it signs out, refuses it on both and after a restart", async () => {
    const schema = fixture.schema();
    const a = await replica(schema);
    const b = await replica(schema);
    const browser = new ConsoleClient(a.app.consoleUrl!);
    await browser.signIn();
    const onB = new ConsoleClient(b.app.consoleUrl!);
    const cookie = browser.cookie;
    onB.cookie = cookie;
    expect((await onB.request("/")).status, "B takes A's session").to.equal(200);
    // Signing out clears the browser's cookie; the copies keep it.
    expect((await browser.post("/logout")).status).to.equal(303);
    const copyOnA = new ConsoleClient(a.app.consoleUrl!);
    copyOnA.cookie = cookie;
    expect((await copyOnA.request("/")).status, "A refuses a copy of the signed-out cookie").to.equal(401);
    expect((await onB.request("/")).status, "so does B").to.equal(401);
    await b.app.stop();
    const restarted = await replica(schema);
    const afterRestart = new ConsoleClient(restarted.app.consoleUrl!);
    afterRestart.cookie = cookie;
    expect((await afterRestart.request("/")).status, "and a replica started since").to.equal(401);
    const fresh = new ConsoleClient(restarted.app.consoleUrl!);
    await fresh.signIn();
    expect((await fresh.request("/")).status, "a new session is taken").to.equal(200);
  });
});
