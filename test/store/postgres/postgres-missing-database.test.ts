import { spawn } from "node:child_process";
import { once } from "node:events";
import { join } from "node:path";
import { expect } from "chai";
import { CJS_HANDLERS, useTempDir } from "../../config/yaml-helpers";
import { runCli } from "../../cli/cli-process";
import { TEST_POSTGRES_URL } from "./postgres-fixture";

/** A database that does not exist at start: one clear line and exit code 1, from the CLI and from app.run(), no stack trace. */
describe("PostgreSQL: the database does not exist at start", function () {
  this.timeout(30_000);
  const tmp = useTempDir();
  const missing = (() => {
    const url = new URL(TEST_POSTGRES_URL);
    url.pathname = `/no_such_database_${process.pid}`;
    return url.toString();
  })();
  // As printed, or inside a JSON log line (quotes escaped).
  const said = new RegExp(`database \\\\?"no_such_database_${process.pid}\\\\?" does not exist`);

  function lines(text: string): string[] {
    return text.split("\n").filter((l) => l.trim() !== "");
  }

  it("webhook-tasks run prints one line and exits 1", async () => {
    const file = tmp.write("w.yaml", `app: {name: missing-db, store: "${missing}"}\nresources:\n  hook: {type: webhook, path: /x, port: 0}\ntasks:\n  - {name: t, source: hook, handler: {ref: "${CJS_HANDLERS}:receive"}}\n`);
    const run = await runCli(["run", file]);
    expect(run.code).to.equal(1);
    expect(lines(run.stderr)).to.have.length(1);
    expect(run.stderr).to.match(said);
    expect(run.stdout + run.stderr).to.not.match(/\n\s+at /);
  });

  it("app.run() logs one line and exits 1", async () => {
    const child = spawn(process.execPath, [join(__dirname, "fixtures/run-app.js")], { env: { ...process.env, STORE_URL: missing }, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (c: Buffer) => (out += c.toString()));
    child.stderr.on("data", (c: Buffer) => (out += c.toString()));
    const [code] = (await once(child, "close")) as [number | null];
    expect(code).to.equal(1);
    expect(lines(out), out).to.have.length(1);
    expect(out).to.match(said);
    expect(out).to.not.match(/\n\s+at /);
  });
});
