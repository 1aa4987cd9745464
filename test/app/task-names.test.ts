import { expect } from "chai";
import { CoreApp, Queue, silentLogger, WebhookSource, type WebhookEvent } from "../../src/index";

describe("Task names", () => {
  it("an anonymous handler is named after its source: the webhook's path, or the queue", () => {
    const app = new CoreApp("names", { store: "memory", logger: silentLogger });
    app.task({ source: new WebhookSource({ path: "/hooks/github", port: 0 }), emit: "pushes" }, async () => 1);
    app.task({ source: "pushes" }, async () => undefined);
    app.task({ source: new Queue<number>("totals") }, async (ctx, n) => n);
    app.task({ source: new WebhookSource({ path: "/", port: 0 }) }, async () => undefined);
    app.task({ source: new WebhookSource({ path: "/hooks/a~b c".replace(" ", "%20"), port: 0 }) }, async () => undefined);
    expect(app.tasks.map((t) => [t.name, t.queue])).to.deep.equal([
      ["hooks/github", "webhook:hooks/github"],
      ["pushes", "pushes"],
      ["totals", "totals"],
      ["root", "webhook:root"],
      ["hooks/a_b_20c", "webhook:hooks/a_b_20c"],
    ]);
  });

  it("keeps the function's name, and `name`, ahead of the source's", () => {
    const app = new CoreApp("names2", { store: "memory", logger: silentLogger });
    app.task({ source: new WebhookSource({ path: "/a", port: 0 }) }, async function receiveOrder() {});
    app.task({ source: new WebhookSource({ path: "/b", port: 0 }), name: "explicit" }, async () => undefined);
    expect(app.tasks.map((t) => t.name)).to.deep.equal(["receiveOrder", "explicit"]);
  });

  it("the same default name for two tasks is refused, asking for `name`", () => {
    const app = new CoreApp("names3", { store: "memory", logger: silentLogger });
    app.task({ source: new WebhookSource({ path: "/hooks/github", port: 0 }) }, async (ctx, event: WebhookEvent) => event.body);
    // Same path on another port: a different source, the same default name.
    expect(() => app.task({ source: new WebhookSource({ path: "/hooks/github", port: 9 }) }, async () => undefined)).to.throw(
      'task "hooks/github": a task with this name exists already, the name this task\'s source gives it; task names must be unique: give this task a name ({ name: "..." })',
    );
    app.task({ source: new WebhookSource({ path: "/hooks/github", port: 9 }), name: "github-9" }, async () => undefined);
    expect(app.tasks.map((t) => t.name)).to.deep.equal(["hooks/github", "github-9"]);
  });

  it("a Queue's name is checked when it is made, and works wherever a queue name does", () => {
    expect(() => new Queue<number>("bad name!")).to.throw('Queue: the name must be 1-200 letters, digits or _ . : - /, got "bad name!"');
    const app = new CoreApp("names5", { store: "memory", logger: silentLogger });
    const q = new Queue<string>("words");
    app.task({ source: new WebhookSource({ path: "/w", port: 0 }), emit: q }, async () => "hello");
    app.task({ source: "words", name: "by-string" }, async () => undefined);
    expect(app.tasks.map((t) => [t.name, t.queue, t.emit])).to.deep.equal([
      ["w", "webhook:w", "words"],
      ["by-string", "words", undefined],
    ]);
    // A second consumer: each gets its own copy, in a queue of its own.
    app.task({ source: q, name: "second" }, async () => undefined);
    expect(app.tasks.map((t) => [t.name, t.queue, t.input])).to.deep.equal([
      ["w", "webhook:w", undefined],
      ["by-string", "words@by-string", "words"],
      ["second", "words@second", "words"],
    ]);
  });

  it("a default name is the same on every start, so queued work and dead letters find their task", () => {
    const names = () => {
      const app = new CoreApp("names4", { store: "memory", logger: silentLogger });
      app.task({ source: new WebhookSource({ path: "/hooks/stripe", port: 0 }) }, async () => undefined);
      return app.tasks.map((t) => t.queue);
    };
    expect(names()).to.deep.equal(names());
  });
});
