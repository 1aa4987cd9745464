import { expect } from "chai";
import { bootstrap, createApp, Module, silentLogger, Task, WebhookSource, type CoreApp, type TaskContext, type WebhookEvent } from "../../src/index";
import { until } from "../helpers/wait";

describe("decorators and bootstrap", () => {
  let app: CoreApp | undefined;
  afterEach(async () => {
    await app?.stop();
    app = undefined;
  });

  it("bootstrap() starts the module's @Task methods bound to one instance per handler class", async () => {
    const hook = new WebhookSource({ path: "/deco", port: 0 });
    const received: unknown[] = [];
    class Handlers {
      private readonly prefix = "seen:";
      @Task({ source: hook, emit: "next" })
      async first(_ctx: TaskContext, event: WebhookEvent<{ n: number }>) {
        return this.prefix + event.body.n;
      }
      @Task({ source: "next", name: "custom-name" })
      async second(ctx: TaskContext, value: string) {
        received.push([ctx.task, value]);
      }
    }
    @Module({ name: "deco", handlers: [Handlers], store: "memory" })
    class AppModule {}

    app = await bootstrap(AppModule, { logger: silentLogger });
    expect(app.running).to.equal(true);
    expect(app.tasks.map((t) => t.name)).to.deep.equal(["Handlers.first", "custom-name"]);
    const res = await fetch(hook.url, { method: "POST", headers: { "content-type": "application/json" }, body: '{"n":7}' });
    expect(res.status).to.equal(202);
    const end = Date.now() + 2000;
    while (received.length === 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 5));
    expect(received).to.deep.equal([["custom-name", "seen:7"]]);
  });

  it("@Task with batch hands the method an array, bound to its instance", async () => {
    const hook = new WebhookSource({ path: "/deco-batch", port: 0 });
    const batches: number[][] = [];
    class Batched {
      private readonly seen = batches;
      @Task({ source: hook, batch: { maxSize: 3, maxWaitMs: 10_000 } })
      async save(_ctx: TaskContext, events: Array<WebhookEvent<{ n: number }>>) {
        this.seen.push(events.map((e) => e.body.n));
      }
    }
    @Module({ name: "deco-batch", handlers: [Batched], store: "memory" })
    class BatchModule {}

    app = await bootstrap(BatchModule, { logger: silentLogger });
    for (const n of [1, 2, 3]) {
      const reply = await fetch(hook.url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ n }) });
      expect(reply.status).to.equal(202);
    }
    await until(() => batches.length > 0, 3_000);
    expect(batches).to.deep.equal([[1, 2, 3]]);
  });

  it("inherits @Task methods from a base class", () => {
    class Base {
      @Task({ source: "base-q" })
      async fromBase() {}
    }
    class Child extends Base {
      @Task({ source: "child-q" })
      async fromChild() {}
    }
    @Module({ name: "inherit", handlers: [Child] })
    class M {}
    expect(createApp(M, { logger: silentLogger }).tasks.map((t) => t.name)).to.deep.equal(["Child.fromBase", "Child.fromChild"]);
  });

  it("refuses a class without @Module, a module without tasks, and a task method with too many parameters", () => {
    class NotAModule {}
    expect(() => createApp(NotAModule)).to.throw(/not a module/);
    class Empty {}
    @Module({ name: "empty", handlers: [Empty] })
    class EmptyModule {}
    expect(() => createApp(EmptyModule)).to.throw(/none of its handlers has a @Task method/);
    expect(() => {
      class Bad {
        // @ts-expect-error the compiler refuses it too; the run-time check is for JavaScript callers
        @Task({ source: "q" })
        async three(_a: TaskContext, _b: unknown, _c: number) {}
      }
      return Bad;
    }).to.throw(/takes \(ctx, event\)/);
  });
});
