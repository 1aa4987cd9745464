import { expect } from "chai";
import { CoreApp, MemoryStore, silentLogger } from "../../src/index";
import { CONSOLE_SIGN_OUTS } from "../../src/console/console-sign-outs";
import type { QueueStats, StateStore } from "../../src/store/store";
import { StoreRefusedError } from "../../src/store/store-errors";
import { ConsoleClient } from "./console-client";
import { CONSOLE_TOKEN } from "./shop-app";

/** A memory store whose console sign-out notes cannot be read while `failing` is set. */
class SignOutsFailing extends MemoryStore {
  failing = false;

  override state(namespace: string): StateStore {
    const inner = super.state(namespace);
    if (namespace !== CONSOLE_SIGN_OUTS) return inner;
    const check = () => {
      if (this.failing) throw new Error("the store is not answering");
    };
    return {
      get: async (key) => (check(), inner.get(key)),
      set: async (key, value, options) => (check(), inner.set(key, value, options)),
      delete: async (key) => (check(), inner.delete(key)),
      setIfAbsent: async (key, value, options) => (check(), inner.setIfAbsent(key, value, options)),
    };
  }
}

/** A memory store that cannot count its queues while `failing` is set, as PostgreSQL out of reach. */
class StatsFailing extends MemoryStore {
  failing = false;

  override async stats(queue: string): Promise<QueueStats> {
    if (this.failing) throw new StoreRefusedError({ code: "store_unavailable", message: "the store cannot reach its database right now", retryAfterSeconds: 5 });
    return super.stats(queue);
  }
}

describe("console: a session the store cannot check", function () {
  this.timeout(20_000);
  let app: CoreApp | undefined;
  afterEach(async () => {
    await app?.stop({ timeoutMs: 2_000 });
    app = undefined;
  });

  it("is not let in while the store cannot say whether it signed out (503), and is again once it can", async () => {
    const store = new SignOutsFailing();
    app = new CoreApp("shop", { store, logger: silentLogger, console: { port: 0, auth: { token: CONSOLE_TOKEN } } });
    app.task({ source: "work", name: "work" }, async () => undefined);
    await app.start();
    const browser = new ConsoleClient(app.consoleUrl!);
    await browser.signIn();
    expect((await browser.request("/")).status).to.equal(200);
    store.failing = true;
    const page = await browser.request("/");
    expect(page.status).to.equal(503);
    expect(page.text).to.include("cannot check your session");
    // The Bearer token needs no note: it is not a session.
    expect((await new ConsoleClient(app.consoleUrl!, CONSOLE_TOKEN).request("/")).status).to.equal(200);
    store.failing = false;
    expect((await browser.request("/")).status).to.equal(200);
  });

  it("answers 503, not 500, to a page whose store cannot be reached now, and 200 again once it can", async () => {
    const store = new StatsFailing();
    app = new CoreApp("shop", { store, logger: silentLogger, console: { port: 0, auth: { token: CONSOLE_TOKEN } } });
    app.task({ source: "work", name: "work" }, async () => undefined);
    await app.start();
    const bearer = new ConsoleClient(app.consoleUrl!, CONSOLE_TOKEN);
    expect((await bearer.request("/")).status).to.equal(200);
    store.failing = true;
    const page = await bearer.request("/");
    expect(page.status).to.equal(503);
    expect(page.text).to.include("The console cannot read the store now: the store cannot reach its database right now");
    store.failing = false;
    expect((await bearer.request("/")).status).to.equal(200);
  });
});
