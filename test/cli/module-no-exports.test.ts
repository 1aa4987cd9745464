import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { storeTargetOfModule } from "../../src/cli/module-target";

describe("CLI: --module with a file that exports nothing", () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), "webhook-tasks-no-exports-"))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("says to give the file that exports the app rather than the one that starts it, or --store", async () => {
    // What `npm start`'s program looks like to the CLI: it starts an app and exports nothing.
    const main = join(dir, "main.js");
    writeFileSync(main, "globalThis.__startedByMain = true;\n");
    let error: unknown;
    await storeTargetOfModule(main).catch((e: unknown) => (error = e));
    expect(String(error)).to.include(`${main} exports nothing: give the file that exports the app (its CoreApp instance or @Module class), not the one that starts it; or --store <data-dir | postgres-url>, which imports no code`);
    // A file with exports but no app keeps naming what it found.
    const handlers = join(dir, "handlers.js");
    writeFileSync(handlers, "exports.receive = () => undefined;\n");
    error = undefined;
    await storeTargetOfModule(handlers).catch((e: unknown) => (error = e));
    expect(String(error)).to.include("exports no app (found receive)");
  });
});
