import { expect } from "chai";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Queue, type WebhookEvent } from "../../src/index";
import { useApps, webhook } from "../helpers/app";
import { postJson } from "../helpers/http-client";
import { until } from "../helpers/wait";

type Body = { items: number[]; note?: string };

/**
 * Each task gets its own copy of an event: what one task's handler changes in its event in
 * place (sorts a list, adds a field) is not seen by another task's copy.
 */
for (const engine of ["memory", "embedded"] as const) {
  describe(`fan-out on the ${engine} store: each task's copy is its own object`, () => {
    const newApp = useApps();
    let dir: string;
    beforeEach(() => (dir = mkdtempSync(join(tmpdir(), "fanout-iso-"))));
    afterEach(() => rmSync(dir, { recursive: true, force: true }));

    it("a webhook event changed in place by one task reaches the other unchanged", async () => {
      const app = newApp(undefined, { store: engine, dataDir: dir });
      const hook = webhook({ path: "/iso" });
      let firstDone!: () => void;
      const done = new Promise<void>((resolve) => (firstDone = resolve));
      const seen: unknown[] = [];
      app.task({ source: hook, name: "sorter" }, async (_ctx, e: WebhookEvent<Body>) => {
        e.body.items.sort((a, b) => a - b);
        e.body.note = "sorted";
        e.headers["x-touched"] = "yes";
        firstDone();
      });
      app.task({ source: hook, name: "reader" }, async (_ctx, e: WebhookEvent<Body>) => {
        await done;
        seen.push({ body: structuredClone(e.body), touched: e.headers["x-touched"] });
      });
      await app.start();
      expect((await postJson(hook.url, { items: [3, 1, 2] })).status).to.equal(202);
      await until(async () => seen.length === 1);
      expect(seen[0]).to.deep.equal({ body: { items: [3, 1, 2] }, touched: undefined });
    });

    it("a value emitted to a queue with two consumers, changed in place by one, reaches the other unchanged", async () => {
      const app = newApp(undefined, { store: engine, dataDir: dir });
      const hook = webhook({ path: "/iso-emit" });
      const lists = new Queue<Body>("lists");
      let firstDone!: () => void;
      const done = new Promise<void>((resolve) => (firstDone = resolve));
      const seen: unknown[] = [];
      app.task({ source: hook, name: "producer", emit: lists }, async () => ({ items: [3, 1, 2] }));
      app.task({ source: lists, name: "sorter" }, async (_ctx, value) => {
        value.items.sort((a, b) => a - b);
        firstDone();
      });
      app.task({ source: lists, name: "reader" }, async (_ctx, value) => {
        await done;
        seen.push(structuredClone(value));
      });
      await app.start();
      expect((await postJson(hook.url, {})).status).to.equal(202);
      await until(async () => seen.length === 1);
      expect(seen[0]).to.deep.equal({ items: [3, 1, 2] });
    });
  });
}
