import { spawnSync } from "node:child_process";
import { join, resolve } from "node:path";
import { expect } from "chai";

const ROOT = resolve(__dirname, "../../..");

describe("console browser test without a browser", function () {
  this.timeout(60_000);
  const run = (ci: string) =>
    spawnSync(process.execPath, [join(ROOT, "node_modules/mocha/bin/mocha.js"), "--no-config", "--exit", join(__dirname, "console-browser.test.js")], {
      cwd: ROOT,
      env: { ...process.env, CHROMIUM_PATH: "/nonexistent/chromium", CI: ci },
      encoding: "utf8",
    });

  it("fails loudly under CI=true", () => {
    const result = run("true");
    expect(result.status).to.not.equal(0);
    expect(result.stdout + result.stderr).to.include("chromium is not installed").and.include("1 failing");
  });

  it("is skipped, saying so, elsewhere", () => {
    const result = run("");
    expect(result.status).to.equal(0);
    expect(result.stdout + result.stderr).to.include("chromium is not installed: the console's browser test is skipped").and.include("3 pending");
  });
});
