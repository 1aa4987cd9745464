import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { CJS_HANDLERS } from "../config/yaml-helpers";
import { RunningCli, runCli } from "./cli-process";

/** A YAML app with secrets from the environment (a sender's, the console's) and no dataDir, in its own directory. */
function writeApp(dir: string, dataDir?: string): string {
  const file = join(dir, "github.yaml");
  writeFileSync(
    file,
    [
      "app:",
      "  store: embedded",
      ...(dataDir === undefined ? [] : [`  dataDir: ${dataDir}`]),
      "  console: {port: 0, auth: {token: '${CONSOLE_TOKEN_FOR_TEST}'}}",
      "resources:",
      "  github: {type: webhook, path: /hooks/github, port: 0, auth: {type: github, secret: '${GH_SECRET_FOR_TEST}'}}",
      "tasks:",
      `  - {name: push, source: github, handler: {ref: "${CJS_HANDLERS}:receive"}}`,
      "",
    ].join("\n"),
  );
  return file;
}

describe("CLI: a YAML app's store, for the dead-letter commands", () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), "webhook-tasks-yaml-store-"));
    mkdirSync(join(root, "app"));
    mkdirSync(join(root, "elsewhere"));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it("keeps its data beside the YAML file by default, and dead-letters needs no secret to open it", async () => {
    const file = writeApp(join(root, "app"));
    const env = { GH_SECRET_FOR_TEST: undefined, CONSOLE_TOKEN_FOR_TEST: undefined, WEBHOOK_TASKS_DATA_DIR: undefined };
    const before = await runCli(["dead-letters", "list", file], env, join(root, "elsewhere"));
    expect(before.code).to.equal(1);
    expect(before.stderr).to.contain(`has no store at ${join(root, "app", ".data", "github")}`);
    expect(before.stderr).not.to.contain("GH_SECRET_FOR_TEST").and.not.to.contain("CONSOLE_TOKEN_FOR_TEST");

    // Run from another directory: the store still lands beside the YAML file.
    const app = new RunningCli([file], { ...env, GH_SECRET_FOR_TEST: "s3cret", CONSOLE_TOKEN_FOR_TEST: "a-console-token-of-some-length" }, join(root, "elsewhere"));
    await app.urls(1);
    expect(await app.stop("SIGTERM")).to.equal(0);
    expect(existsSync(join(root, "app", ".data", "github"))).to.equal(true);
    expect(existsSync(join(root, "elsewhere", ".data"))).to.equal(false);

    const after = await runCli(["dead-letters", "list", file], env, join(root, "elsewhere"));
    expect(after.code, after.stderr).to.equal(0);
    expect(after.stdout.trim()).to.equal("no dead letters");
    for (const command of [["status"], ["events", "list"]]) {
      const read = await runCli([...command, file], env, join(root, "elsewhere"));
      expect(read.code, `${command.join(" ")}: ${read.stderr}`).to.equal(0);
    }
  });

  it("still refuses a variable the store settings need, naming it", async () => {
    const file = writeApp(join(root, "app"), "${STORE_DIR_FOR_TEST}");
    const result = await runCli(["dead-letters", "list", file], { STORE_DIR_FOR_TEST: undefined, GH_SECRET_FOR_TEST: undefined });
    expect(result.code).to.equal(1);
    expect(result.stderr).to.contain("app.dataDir").and.contain("environment variable STORE_DIR_FOR_TEST is not set");
    expect(result.stderr).not.to.contain("GH_SECRET_FOR_TEST");
  });
});
