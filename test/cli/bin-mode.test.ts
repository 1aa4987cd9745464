import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { useTempDir } from "../config/yaml-helpers";

/** The package's own package.json (dist/test/cli -> the root). */
const PACKAGE = join(__dirname, "../../../package.json");

/** Writes the bin as tsc does: a new file, not executable. */
const FAKE_TSC = `node -e "const fs=require('fs');fs.mkdirSync('dist/src/cli',{recursive:true});fs.writeFileSync('dist/src/cli/main.js','#!/usr/bin/env node\\n',{mode:0o644})"`;

describe("CLI: the build leaves the bin executable", () => {
  const tmp = useTempDir();
  const scripts = (JSON.parse(readFileSync(PACKAGE, "utf8")) as { scripts: Record<string, string> }).scripts;

  // npx links dist/src/cli/main.js once and made it executable then; a build that writes it anew without the bit breaks `npx webhook-tasks`.
  for (const name of ["build", "prepare"]) {
    it(`npm run ${name}: dist/src/cli/main.js is executable afterwards`, function () {
      if (process.platform === "win32") this.skip();
      const script = scripts[name];
      expect(script, name).to.match(/tsc -p tsconfig(\.build)?\.json/);
      const dir = tmp.dir();
      mkdirSync(join(dir, "src/console/assets"), { recursive: true });
      // The script as npm runs it (sh -c), with tsc replaced by a stand-in that writes the bin as tsc would.
      const run = spawnSync("sh", ["-c", script.replace(/tsc -p tsconfig(\.build)?\.json/, FAKE_TSC)], { cwd: dir, encoding: "utf8" });
      expect(run.status, run.stderr).to.equal(0);
      const mode = statSync(join(dir, "dist/src/cli/main.js")).mode;
      expect(mode & 0o111, `mode ${(mode & 0o777).toString(8)}`).to.equal(0o111);
    });
  }
});
