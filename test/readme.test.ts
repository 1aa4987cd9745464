import { expect } from "chai";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { CoreApp } from "../src/index";

const ROOT = resolve(__dirname, "../..");
const README = readFileSync(join(ROOT, "README.md"), "utf8");

/** Code blocks the README introduces with a line "`samples/<file>`:". */
function fileBlocks(): Array<{ file: string; code: string }> {
  const blocks: Array<{ file: string; code: string }> = [];
  for (const match of README.matchAll(/^`(samples\/[^`]+)`(?: \([^)]*\))?:\n\n```\w*\n([\s\S]*?)```$/gm)) {
    blocks.push({ file: match[1], code: match[2] });
  }
  return blocks;
}

describe("README examples", () => {
  it("every block that names a sample file is that file, byte for byte", () => {
    const blocks = fileBlocks();
    expect(blocks.map((b) => b.file)).to.include.members(["samples/readme/quickstart.ts", "samples/github-handlers.ts", "samples/order-handlers.ts", "samples/app.module.ts", "samples/main.ts", "samples/readme/journal-options.ts"]);
    for (const { file, code } of blocks) {
      expect(code, `${file} differs from its README block`).to.equal(readFileSync(join(ROOT, file), "utf8"));
    }
  });

  it("the journal options example runs an app on that store", async () => {
    const example = require("../samples/readme/journal-options") as typeof import("../samples/readme/journal-options");
    const home = process.cwd();
    const cwd = mkdtempSync(join(tmpdir(), "readme-journal-"));
    process.chdir(cwd); // the example's ".data/orders" lands here
    try {
      await example.app.start();
      expect(example.app.store).to.equal(example.store);
      expect(example.store).to.include({ engine: "embedded", durable: true });
      await example.app.stop();
      expect(existsSync(join(cwd, ".data", "orders", "journal"))).to.equal(true);
    } finally {
      process.chdir(home);
      rmSync(cwd, { recursive: true, force: true });
    }
  });

  describe("the quick start runs as written", () => {
    let app: CoreApp;
    let dataDir: string;
    let url: string;

    before(async () => {
      dataDir = mkdtempSync(join(tmpdir(), "readme-"));
      process.env.PORT = "0";
      process.env.WEBHOOK_TASKS_DATA_DIR = dataDir; // the default embedded store, in a temp dir
      process.env.WEBHOOK_TASKS_LOG_LEVEL = "warn";
      const quickstart = require("../samples/readme/quickstart") as typeof import("../samples/readme/quickstart");
      app = quickstart.app;
      await app.start();
      url = quickstart.ordersHook.url;
    });
    after(async () => {
      await app?.stop();
      delete process.env.PORT;
      delete process.env.WEBHOOK_TASKS_DATA_DIR;
      delete process.env.WEBHOOK_TASKS_LOG_LEVEL;
      rmSync(dataDir, { recursive: true, force: true });
    });

    it("answers 202, totals the order in the first task and stores it from the second", async () => {
      const order = { id: "o-1", lines: [{ sku: "a", qty: 2, price: 5 }, { sku: "b", qty: 1, price: 3 }] };
      const unauthorised = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(order) });
      expect(unauthorised.status).to.equal(401);
      const res = await fetch(url, { method: "PUT", headers: { "content-type": "application/json", authorization: "Bearer change-me" }, body: JSON.stringify(order) });
      expect(res.status).to.equal(202);
      expect(app.store.engine).to.equal("embedded");
      const state = app.store.state("task:recordTotal");
      const end = Date.now() + 5000;
      while ((await state.get("total:o-1")) === undefined && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
      expect(await state.get("total:o-1")).to.equal(13);
    });
  });
});
