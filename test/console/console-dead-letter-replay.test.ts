import { expect } from "chai";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CoreApp, PermanentError, silentLogger, WebhookSource } from "../../src/index";
import { ConsoleClient } from "./console-client";
import { CONSOLE_TOKEN, eventually } from "./shop-app";

/**
 * A dead letter replayed from the console without its event in the history (history off, or
 * pruned): the letter itself goes back to its queue, which must be one a task of the app reads.
 */
describe("Console: replaying a dead letter without its event in the history", () => {
  let dir: string;
  const apps: CoreApp[] = [];

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "console-letter-"));
  });
  afterEach(async () => {
    for (const app of apps.splice(0)) await app.stop({ timeoutMs: 2_000 });
    rmSync(dir, { recursive: true, force: true });
  });

  /** An app on the shared data directory whose one task, named `task`, fails while `failing.now`. */
  async function start(task: string, failing: { now: boolean }, ran: string[] = []): Promise<{ app: CoreApp; source: WebhookSource; client: ConsoleClient }> {
    const source = new WebhookSource({ path: "/hook", host: "127.0.0.1", port: 0 });
    const app = new CoreApp("letters", { store: "embedded", dataDir: dir, history: false, logger: silentLogger, console: { port: 0, auth: { token: CONSOLE_TOKEN } } });
    app.task({ source, name: task, retry: { attempts: 1 } }, async (ctx) => {
      if (failing.now) throw new PermanentError("declined");
      ran.push(ctx.eventId);
    });
    await app.start();
    apps.push(app);
    const client = new ConsoleClient(app.consoleUrl ?? "");
    await client.signIn();
    return { app, source, client };
  }

  async function deadLetterOf(app: CoreApp, source: WebhookSource): Promise<string> {
    const res = await fetch(source.url, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(res.status).to.equal(202);
    const [letter] = await eventually(async () => {
      const list = await app.deadLetters.list();
      return list.length > 0 ? list : undefined;
    });
    return letter.message.id;
  }

  it("puts it back in its task's queue, where the task runs it", async () => {
    const failing = { now: true };
    const ran: string[] = [];
    const { app, source, client } = await start("billing", failing, ran);
    const id = await deadLetterOf(app, source);
    failing.now = false;
    const answer = await client.post(`/dead-letters/${encodeURIComponent(id)}/replay`);
    expect(answer.status).to.equal(303);
    expect(answer.headers.get("location")).to.include("notice=requeued");
    await eventually(async () => (ran.length === 1 ? true : undefined));
    expect(await app.deadLetters.list()).to.deep.equal([]);
  });

  it("refuses (409) when no task of the app reads its queue any more (the task was renamed), and keeps the letter", async () => {
    const first = await start("billing", { now: true });
    const id = await deadLetterOf(first.app, first.source);
    await first.app.stop({ timeoutMs: 2_000 });
    apps.splice(apps.indexOf(first.app), 1);

    const renamed = await start("charge", { now: false });
    const answer = await renamed.client.post(`/dead-letters/${encodeURIComponent(id)}/replay`);
    expect(answer.status).to.equal(409);
    expect(answer.text).to.include("No task of this app reads queue");
    expect(answer.text).to.include("&quot;billing&quot;");
    const kept = await renamed.app.deadLetters.list();
    expect(kept.map((l) => l.message.id)).to.deep.equal([id]);
  });
});
