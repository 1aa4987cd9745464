import { expect } from "chai";
import { CoreApp, silentLogger } from "../../../src/index";
import { PostgresStore } from "../../../src/store/postgres/postgres-store";
import { STORE_ENV, storeFromEnv } from "../../../src/store/create-store";
import { CJS_HANDLERS, useTempDir } from "../../config/yaml-helpers";
import { runCli } from "../../cli/cli-process";
import { PostgresFixture } from "./postgres-fixture";

describe("PostgreSQL: the password never shows", function () {
  this.timeout(30_000);
  const fixture = new PostgresFixture();
  const tmp = useTempDir();
  afterEach(() => fixture.cleanup());

  const yaml = () =>
    tmp.write(
      "secret.yaml",
      `app: {name: secret-app, store: "\${DATABASE_URL}"}\nresources:\n  hook: {type: webhook, path: /x, port: 0}\ntasks:\n  - {name: t, source: hook, handler: {ref: "${CJS_HANDLERS}:receive"}}\n`,
    );

  it("check hides a password holding @, and one given as ?password= or ?sslpassword=", async () => {
    const file = yaml();
    const withAt = await runCli(["check", file], { DATABASE_URL: "postgres://app:hunt@er2@db.internal:5432/hooks" });
    expect(withAt.stdout).to.contain("postgres://app:***@db.internal:5432/hooks").and.not.contain("hunt").and.not.contain("er2");
    const inQuery = await runCli(["check", file], { DATABASE_URL: "postgres://db.internal/hooks?sslpassword=keypass&password=hunter2&schema=s" });
    expect(inQuery.stdout).to.contain("?sslpassword=***&password=***&schema=s").and.not.contain("hunter2").and.not.contain("keypass");
  });

  it("$WEBHOOK_TASKS_STORE holding a URL of another form is refused without echoing its password", async () => {
    expect(() => storeFromEnv({ [STORE_ENV]: "POSTGRES://app:hunter2@db/x" })).to.throw(TypeError, /WEBHOOK_TASKS_STORE="POSTGRES:\/\/…"/);
    // A URL missing a slash has no "://", yet its password is there all the same.
    expect(() => storeFromEnv({ [STORE_ENV]: "postgres:/app:hunter2@db/x" })).to.throw(TypeError, STORE_ENV).with.property("message").that.does.not.contain("hunter2");
    expect(() => storeFromEnv({ [STORE_ENV]: "app:hunter2@db:5432/x" })).to.throw(TypeError, STORE_ENV).with.property("message").that.does.not.contain("hunter2");
    expect(() => storeFromEnv({ [STORE_ENV]: "memroy" })).to.throw(TypeError, 'WEBHOOK_TASKS_STORE="memroy" (did you mean "memory"?)');
    // A bare word that is no engine's name may be a password given by mistake: not shown.
    expect(() => storeFromEnv({ [STORE_ENV]: "hunter2secret" })).to.throw(TypeError, STORE_ENV).with.property("message").that.does.not.contain("hunter2");
    // --store reads a mistyped URL as a directory, whose path would show the password.
    const mistyped = await runCli(["status", "--store", "postgres:/app:hunter2@db/x"]);
    expect(mistyped.code).to.equal(1);
    expect(mistyped.stderr).to.contain("not a postgres:// URL").and.not.contain("hunter2");
    const noStore = tmp.write("no-store.yaml", `app: {name: secret-app}\nresources:\n  hook: {type: webhook, path: /x, port: 0}\ntasks:\n  - {name: t, source: hook, handler: {ref: "${CJS_HANDLERS}:receive"}}\n`);
    const run = await runCli(["check", noStore], { [STORE_ENV]: "postgres+ssl://app:hunter2@db/x" });
    expect(run.code).to.equal(1);
    expect(run.stderr).to.contain(STORE_ENV).and.not.contain("hunter2");
  });

  it("a connection string the driver cannot read is refused at once, without showing it", async () => {
    const url = fixture.url.replace("postgres://postgres@", "postgres://postgres:hun/ter2@");
    expect(() => new PostgresStore({ connectionString: url, schema: fixture.schema() })).to.throw(TypeError, /not a valid URL/);
    try {
      new PostgresStore({ connectionString: url });
    } catch (error) {
      expect(String((error as Error).message)).to.not.contain("hun").and.not.contain("ter2");
    }
    // Through the app: start() fails instead of answering 503 for ever as if the database were down.
    const app = new CoreApp("bad-url", { store: `${url}?schema=${fixture.schema()}` as `postgres://${string}`, logger: silentLogger });
    app.task({ source: "in", name: "t" }, async () => undefined);
    let failure: unknown;
    await app.start().catch((error: unknown) => (failure = error));
    await app.stop().catch(() => undefined);
    expect(String((failure as Error | undefined)?.message)).to.match(/not a valid URL/).and.not.contain("ter2");
  });
});
