import { expect } from "chai";
import { CoreApp, silentLogger } from "../../src/index";

describe("CoreApp.storeSettings", () => {
  const saved = process.env.WEBHOOK_TASKS_STORE;
  afterEach(() => {
    if (saved === undefined) delete process.env.WEBHOOK_TASKS_STORE;
    else process.env.WEBHOOK_TASKS_STORE = saved;
  });

  it("gives the store as start() resolves it: the option, else $WEBHOOK_TASKS_STORE, else embedded", () => {
    delete process.env.WEBHOOK_TASKS_STORE;
    expect(new CoreApp("a", { logger: silentLogger }).storeSettings).to.deep.equal({ store: "embedded", dataDir: undefined, maxQueued: undefined, maxBytes: undefined, history: undefined });
    process.env.WEBHOOK_TASKS_STORE = "postgres://db/hooks";
    expect(new CoreApp("b", { logger: silentLogger }).storeSettings.store).to.equal("postgres://db/hooks");
    const app = new CoreApp("c", { logger: silentLogger, store: "memory", dataDir: "/srv/c", maxQueued: 5, maxBytes: 1024, history: false });
    expect(app.storeSettings).to.deep.equal({ store: "memory", dataDir: "/srv/c", maxQueued: 5, maxBytes: 1024, history: false });
  });

  it("is read-only, and follows configureForTest", () => {
    const app = new CoreApp("d", { logger: silentLogger, store: "embedded" });
    expect(Object.isFrozen(app.storeSettings)).to.equal(true);
    app.configureForTest({ store: "memory" });
    expect(app.storeSettings.store).to.equal("memory");
  });
});
