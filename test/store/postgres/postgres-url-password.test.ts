import { expect } from "chai";
import { redactPostgresUrl } from "../../../src/store/postgres/postgres-options";
import { PostgresStore } from "../../../src/store/postgres/postgres-store";
import { CJS_HANDLERS, useTempDir } from "../../config/yaml-helpers";
import { runCli } from "../../cli/cli-process";

/**
 * A password holding an unencoded # / or ? ends the URL's authority inside it: the URL still
 * parses, and the rest of the password became a port, a database name or a query. Such URLs
 * are refused, and nothing shows any part of the password.
 */
describe("PostgreSQL: a password with an unencoded # / ?", function () {
  this.timeout(30_000);
  const tmp = useTempDir();
  const yaml = () =>
    tmp.write(
      "secret.yaml",
      `app: {name: secret-app, store: "\${DATABASE_URL}"}\nresources:\n  hook: {type: webhook, path: /x, port: 0}\ntasks:\n  - {name: t, source: hook, handler: {ref: "${CJS_HANDLERS}:receive"}}\n`,
    );
  const misread = ["postgres://app:12#hunter@db.internal:5432/hooks", "postgres://app:12/hunter@db.internal/hooks", "postgres://app:12?hunter@db.internal/hooks", "postgres://app:s3#hunter@db.internal/hooks"];

  for (const url of misread) {
    it(`check and status refuse ${url.replace("hunter", "…")} without showing the password`, async () => {
      const file = yaml();
      for (const command of ["check", "status"]) {
        const run = await runCli([command, file], { DATABASE_URL: url });
        expect(run.code, `${command}: ${run.stderr}`).to.equal(1);
        expect(run.stderr).to.match(/not a valid URL.*percent-encoded/);
        expect(run.stdout + run.stderr).to.not.contain("hunter").and.not.contain("ENOTFOUND");
      }
      expect(() => new PostgresStore({ connectionString: url })).to.throw(TypeError, /not a valid URL/);
      expect(redactPostgresUrl(url)).to.equal("postgres://*** (not a valid URL)");
    });
  }

  it("a port out of range is named with its host, past the password; without an @ nothing is shown", () => {
    expect(() => new PostgresStore({ connectionString: "postgres://app:hunter@db.internal:99999/hooks" })).to.throw(
      TypeError,
      "PostgresStore: connectionString is not a valid URL: the port of db.internal is 99999, not a number from 0 to 65535; the rest is not shown",
    );
    // No "@": the number may be a password that lost its host, so it is not shown.
    let message = "";
    try {
      new PostgresStore({ connectionString: "postgres://app:738291/hooks" });
    } catch (error) {
      message = String(error);
    }
    expect(message).to.contain("a port is a number from 0 to 65535").and.not.contain("738291");
  });

  it("a bad port is not looked for in the query, where an @ may be inside ?password=", () => {
    let message = "";
    try {
      new PostgresStore({ connectionString: "postgres://db.internal:99999/hooks?password=hun@zq7x:123456" });
    } catch (error) {
      message = String(error);
    }
    expect(message).to.contain("not a valid URL").and.not.contain("zq7x").and.not.contain("123456");
  });

  it("a well-formed URL with an @ in its query still checks out", async () => {
    const run = await runCli(["check", yaml()], { DATABASE_URL: "postgres://app:hunter@db.internal/hooks?application_name=me@there" });
    expect(run.code, run.stderr).to.equal(0);
    expect(run.stdout).to.contain("postgres://app:***@db.internal/hooks?application_name=me@there").and.not.contain("hunter");
  });
});
