import { expect } from "chai";
import { CoreApp, Queue, silentLogger, WebhookSource, type WebhookEvent } from "../../src/index";
import { testApp } from "../../src/testing/index";

type Org = { kind: string; n: number };

/** An organisation hook feeding three tasks, one of which emits to a queue with two consumers. */
function orgApp() {
  const hook = new WebhookSource({ path: "/hooks/org", port: 8080 });
  const counts = new Queue<{ n: number }>("counts");
  const app = new CoreApp("kit-fan-out", { logger: silentLogger });
  app.task({ source: hook, name: "pushes", emit: counts, filter: (e: WebhookEvent) => (e.body as Org).kind === "push" }, async (_ctx, e: WebhookEvent<Org>) => ({ n: e.body.n }));
  app.task({ source: hook, name: "issues", filter: (e: WebhookEvent) => (e.body as Org).kind === "issue" }, async () => "issue seen");
  app.task({ source: hook, name: "audit", filter: (e: WebhookEvent) => (e.body as Org).kind !== "star" }, async (_ctx, e: WebhookEvent<Org>) => {
    if (e.body.n < 0) throw new Error("negative");
    return `audited ${e.body.kind}`;
  });
  app.task({ source: counts, name: "sum" }, async (_ctx, c) => c.n * 2);
  app.task({ source: counts, name: "odd", filter: (c) => c.n % 2 === 1 }, async () => "odd");
  return { app, hook, counts };
}

describe("testing: deliver routes as the app does and returns every subscriber's run", () => {
  it("gives one run per task that took the event, by name; send gives the first", async () => {
    const { app, hook, counts } = orgApp();
    const t = await testApp(app);
    try {
      const push = await t.deliver<Org>(hook, { body: { kind: "push", n: 3 } });
      expect(push.status).to.equal(202);
      expect(Object.keys(push.runs)).to.deep.equal(["pushes", "audit"]);
      expect(push.runs.pushes.emitted).to.deep.equal({ n: 3 });
      expect(push.runs.audit.result).to.equal("audited push");
      expect(push.runs.audit.event?.body).to.deep.equal({ kind: "push", n: 3 });

      const failing = await t.deliver<Org>(hook, { body: { kind: "issue", n: -1 } });
      expect(failing.runs.issues.result).to.equal("issue seen");
      expect(String(failing.runs.audit.error)).to.contain("negative");

      const none = await t.deliver(hook, { body: { kind: "star", n: 1 } });
      expect(none.status).to.equal(200);
      expect(none.body).to.include({ accepted: true, routed: false }).and.have.property("id").that.is.a("string");
      expect(none.runs).to.deep.equal({});

      const first = await t.send<Org>(hook, { body: { kind: "issue", n: 2 } });
      expect(first.result).to.equal("issue seen");

      // push: every consumer whose filter takes the value gets it; the run is the first's.
      expect((await t.push(counts, { n: 5 })).result).to.equal(10);
    } finally {
      await t.stop();
    }
  });
});

describe("testing: send and deliver with any task name", () => {
  it("send gives the run of the first task added, even when a later one's name is a number", async () => {
    const hook = new WebhookSource({ path: "/hooks/numbers", port: 8080 });
    const app = new CoreApp("kit-number-names", { logger: silentLogger });
    app.task({ source: hook, name: "audit" }, async () => "audit ran");
    app.task({ source: hook, name: "2024" }, async () => "2024 ran");
    const t = await testApp(app);
    try {
      expect((await t.send(hook, { body: {} })).result).to.equal("audit ran");
      expect(Object.keys((await t.deliver(hook, { body: {} })).runs)).to.have.members(["audit", "2024"]);
    } finally {
      await t.stop();
    }
  });

  it("a task named __proto__ has its run in deliver's runs, and send gives it", async () => {
    const hook = new WebhookSource({ path: "/hooks/proto", port: 8080 });
    const app = new CoreApp("kit-proto-name", { logger: silentLogger });
    app.task({ source: hook, name: "__proto__" }, async () => "proto ran");
    app.task({ source: hook, name: "other", filter: () => false }, async () => "other ran");
    const t = await testApp(app);
    try {
      const delivery = await t.deliver(hook, { body: {} });
      expect(Object.keys(delivery.runs)).to.deep.equal(["__proto__"]);
      expect(Object.getOwnPropertyDescriptor(delivery.runs, "__proto__")?.value.result).to.equal("proto ran");
      expect((await t.send(hook, { body: {} })).result).to.equal("proto ran");
    } finally {
      await t.stop();
    }
  });
});
