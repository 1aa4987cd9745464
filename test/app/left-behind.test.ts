import { expect } from "chai";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CoreApp, createDefaultLogger } from "../../src/index";
import { sleep, webhook } from "../helpers/app";
import { postJson } from "../helpers/http-client";

type Line = Record<string, unknown> & { level: number; msg: string };

/**
 * A deploy that renames a task (an anonymous handler given a name: its queue goes from
 * `webhook:hooks/x` to `webhook:handle`) strands what waited under the old name. The app used
 * to start without a word, the events looking lost until someone ran `webhook-tasks status`.
 */
describe("start: queues left behind by a renamed task are named in a warning", () => {
  let dir: string;
  const apps: CoreApp[] = [];
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), "left-behind-"))));
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.stop({ timeoutMs: 2_000 })));
    rmSync(dir, { recursive: true, force: true });
  });

  const start = async (task: string, lines: Line[] = []) => {
    const logger = createDefaultLogger("info", {}, { write: (text: string) => void lines.push(JSON.parse(text) as Line) });
    const app = new CoreApp("left-behind", { store: "embedded", dataDir: dir, logger });
    apps.push(app);
    const hook = webhook({ path: "/hooks/x" });
    // Fails, and retries only after a minute: the events wait in the task's queue.
    app.task({ source: hook, name: task, retry: { attempts: 5, initialDelayMs: 60_000 } }, async () => {
      throw new Error("not yet");
    });
    await app.start();
    return { app, hook };
  };

  const stranded = async (lines: Line[]): Promise<Line | undefined> => {
    for (let i = 0; i < 40; i++) {
      const found = lines.find((l) => l.level === 40 && l.queue !== undefined);
      if (found) return found;
      await sleep(25);
    }
    return undefined;
  };

  it("renamed: a warning names the old queue, its messages and the former task name", async () => {
    const before = await start("hooks/x");
    for (const n of [1, 2]) expect((await postJson(before.hook.url, { n })).status).to.equal(202);
    await before.app.stop();
    apps.splice(0);

    const lines: Line[] = [];
    await start("handle", lines);
    const warning = await stranded(lines);
    expect(warning, JSON.stringify(lines)).to.not.equal(undefined);
    expect(warning).to.deep.include({ queue: "webhook:hooks/x", messages: 2, formerTask: "hooks/x" });
    expect(warning!.msg).to.match(/^queue "webhook:hooks\/x" holds 2 messages that no task of this app consumes .*name a task "hooks\/x" again/);
  });

  it("the same name again: no warning, the task takes its queue", async () => {
    const before = await start("hooks/x");
    expect((await postJson(before.hook.url, { n: 1 })).status).to.equal(202);
    await before.app.stop();
    apps.splice(0);

    const lines: Line[] = [];
    await start("hooks/x", lines);
    expect(await stranded(lines)).to.equal(undefined);
  });
});
