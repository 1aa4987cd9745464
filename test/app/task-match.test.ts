import { expect } from "chai";
import { CoreApp, GitHubSignature, HmacSignature, Queue, silentLogger, WebhookSource, type WebhookEvent } from "../../src/index";
import { eventNameMatcher, eventPatternProblem } from "../../src/sources/webhook/event-names/event-pattern";
import { taskMatcher } from "../../src/app/task-match";
import { TaskRegistry } from "../../src/app/task-registry";

const named = (name: string | undefined, body: unknown = {}): WebhookEvent => ({
  body,
  headers: {},
  query: {},
  method: "POST",
  path: "/hook",
  client: ["127.0.0.1", 1],
  received_at: 0,
  ...(name === undefined ? {} : { name }),
});

describe("event name patterns", () => {
  const matches = (patterns: string | string[], name: string | undefined) => eventNameMatcher(typeof patterns === "string" ? [patterns] : patterns, "test")(name);

  it("a name matches itself and every name below it", () => {
    expect(matches("pull_request", "pull_request")).to.equal(true);
    expect(matches("pull_request", "pull_request.opened")).to.equal(true);
    expect(matches("pull_request.opened", "pull_request.opened")).to.equal(true);
    expect(matches("pull_request.opened", "pull_request.closed")).to.equal(false);
    expect(matches("pull_request", "pull_request_review.submitted")).to.equal(false);
    expect(matches("orders", "orders/create")).to.equal(true);
    expect(matches("orders/create", "orders/created")).to.equal(false);
  });

  it('"." and "/" both separate segments: a pattern written with either matches a name written with the other', () => {
    // Shopify names its topics "orders/create"; "orders.create" is the same two segments.
    expect(matches("orders.create", "orders/create")).to.equal(true);
    expect(matches("orders/create", "orders.create")).to.equal(true);
    expect(matches("orders.*", "orders/create")).to.equal(true);
    expect(matches("*.create", "orders/create")).to.equal(true);
    expect(matches("orders.create", "orders/created")).to.equal(false);
    expect(matches("orders.create", "orders_create")).to.equal(false);
  });

  it('"*" alone matches every name, but not an event without one', () => {
    expect(matches("*", "push")).to.equal(true);
    expect(matches("*", "checkout.session.completed")).to.equal(true);
    expect(matches("*", undefined)).to.equal(false);
  });

  it('a trailing "*" stands for one or more segments, another "*" for exactly one', () => {
    expect(matches("invoice.*", "invoice.paid")).to.equal(true);
    expect(matches("invoice.*", "invoice.payment.failed")).to.equal(true);
    expect(matches("invoice.*", "invoice")).to.equal(false);
    expect(matches("invoice.*", "invoiceitem.created")).to.equal(false);
    expect(matches("orders/*", "orders/create")).to.equal(true);
    expect(matches("*.messages", "whatsapp_business_account.messages")).to.equal(true);
    expect(matches("*.messages", "page.feed")).to.equal(false);
    expect(matches("customer.*.created", "customer.subscription.created")).to.equal(true);
    expect(matches("customer.*.created", "customer.subscription.deleted")).to.equal(false);
  });

  it("characters that mean something in a regular expression are literal", () => {
    expect(matches("a+b", "a+b")).to.equal(true);
    expect(matches("a+b", "aab")).to.equal(false);
    expect(matches("/deploy", "/deploy")).to.equal(true);
  });

  it("a list matches when any pattern does", () => {
    expect(matches(["push", "invoice.*"], "invoice.paid")).to.equal(true);
    expect(matches(["push", "invoice.*"], "charge.refunded")).to.equal(false);
  });

  it("refuses patterns it could not match as meant", () => {
    expect(eventPatternProblem("")).to.equal("an event name must be a non-empty string");
    expect(eventPatternProblem(5)).to.equal("an event name must be a non-empty string");
    expect(eventPatternProblem("invoice*")).to.equal('"invoice*": "*" stands for a whole segment ("invoice.*", not "invoice*")');
    expect(eventPatternProblem("invoice..paid")).to.equal('"invoice..paid": an event name is segments separated by "." or "/", without spaces or empty segments');
    expect(eventPatternProblem("pull request")).to.match(/without spaces/);
    expect(eventPatternProblem("x".repeat(201))).to.equal("an event name is at most 200 characters");
    expect(() => eventNameMatcher(["push", "bad*"], 'task "t": on')).to.throw(TypeError, 'task "t": on: "bad*": "*" stands for a whole segment');
  });
});

describe("taskMatcher: on and filter", () => {
  const github = new WebhookSource({ path: "/gh", port: 0, auth: new GitHubSignature("s") });

  it("no on and no filter: undefined (the task takes every event)", () => {
    expect(taskMatcher({ source: github }, "t")).to.equal(undefined);
  });

  it("on alone matches event.name", () => {
    const accepts = taskMatcher({ source: github, on: "pull_request" }, "t")!;
    expect(accepts(named("pull_request.opened"))).to.equal(true);
    expect(accepts(named("push"))).to.equal(false);
    expect(accepts(named(undefined))).to.equal(false);
    expect(accepts(null)).to.equal(false);
  });

  it("filter alone: only a returned true accepts", () => {
    const accepts = taskMatcher({ filter: (event: WebhookEvent<{ n: number }>) => event.body.n > 1 }, "t")!;
    expect(accepts(named("x", { n: 2 }))).to.equal(true);
    expect(accepts(named("x", { n: 1 }))).to.equal(false);
    const forgetful = taskMatcher({ filter: (() => 1) as unknown as () => boolean }, "t")!;
    expect(forgetful(named("x"))).to.equal(false);
  });

  it("on and filter: both must accept, and the filter sees only events on matched", () => {
    const seen: unknown[] = [];
    const accepts = taskMatcher({ source: github, on: ["push"], filter: (event: WebhookEvent<{ ref: string }>) => (seen.push(event.body), event.body.ref === "main") }, "t")!;
    expect(accepts(named("push", { ref: "main" }))).to.equal(true);
    expect(accepts(named("push", { ref: "dev" }))).to.equal(false);
    expect(accepts(named("issues.opened", { ref: "main" }))).to.equal(false);
    expect(seen).to.have.length(2);
  });

  it("a filter that throws is not caught: the router decides what that means", () => {
    const accepts = taskMatcher({ filter: () => { throw new Error("bad filter"); } }, "t")!;
    expect(() => accepts(named("x"))).to.throw("bad filter");
  });

  it("refuses a filter that is not a function", () => {
    expect(() => taskMatcher({ filter: "yes" as unknown as () => boolean }, 'task "t"')).to.throw(TypeError, 'task "t": filter must be a function (event) => boolean');
  });

  it("refuses on that is not a name or a non-empty list of names", () => {
    for (const on of [[], 5, { name: "push" }]) {
      expect(() => taskMatcher({ source: github, on: on as unknown as string }, 'task "t"')).to.throw(TypeError, 'task "t": on must be an event name or a non-empty list of them');
    }
    expect(() => taskMatcher({ source: github, on: ["push", ""] }, 'task "t"')).to.throw(TypeError, 'task "t": on: an event name must be a non-empty string');
  });

  it("refuses on for a source that names nothing, naming the source and the remedies", () => {
    const plain = new WebhookSource({ path: "/plain", port: 0 });
    expect(() => taskMatcher({ source: plain, on: "push" }, 'task "t"')).to.throw(
      TypeError,
      'task "t": on needs named events, and WebhookSource POST 127.0.0.1:0/plain does not name its events: give it a sender\'s verifier as auth (GitHubSignature, StripeSignature, ...) or an eventName option',
    );
    const hmac = new WebhookSource({ path: "/hmac", port: 0, auth: new HmacSignature("s", { header: "x-sig" }) });
    expect(() => taskMatcher({ source: hmac, on: "push" }, 'task "t"')).to.throw(TypeError, /does not name its events/);
    const named = new WebhookSource({ path: "/named", port: 0, auth: new HmacSignature("s", { header: "x-sig" }), eventName: (e) => e.headers["x-kind"] });
    expect(taskMatcher({ source: named, on: "push" }, 'task "t"')).to.be.a("function");
  });

  it("refuses on for a queue source: queue messages have no names", () => {
    for (const source of ["work", new Queue<number>("work")]) {
      expect(() => taskMatcher({ source, on: "push" }, 'task "t"')).to.throw(TypeError, 'task "t": on selects events by the name their sender gives them, and queue messages have none; use filter to choose among them');
    }
  });
});

describe("app.task with on and filter", () => {
  it("the registry keeps the matcher as accepts; a task without either has none", () => {
    const registry = new TaskRegistry();
    const github = new WebhookSource({ path: "/gh", port: 0, auth: new GitHubSignature("s") });
    const placeholder = { state: undefined as never, logger: silentLogger };
    const selective = registry.add({ source: github, name: "prs", on: "pull_request.opened", filter: () => true }, async () => undefined, placeholder);
    expect(selective.accepts?.(named("pull_request.opened"))).to.equal(true);
    expect(selective.accepts?.(named("pull_request.closed"))).to.equal(false);
    const all = registry.add({ source: "work", name: "all" }, async () => undefined, placeholder);
    expect(all.accepts).to.equal(undefined);
  });

  it("refuses the task when it is added, before anything starts", () => {
    const app = new CoreApp("match", { store: "memory", logger: silentLogger });
    const plain = new WebhookSource({ path: "/plain", port: 0 });
    expect(() => app.task({ source: plain, name: "p", on: "push" }, async () => undefined)).to.throw(TypeError, 'task "p": on needs named events');
    expect(() => app.task({ source: "q", name: "q", on: "push" }, async () => undefined)).to.throw(TypeError, 'task "q": on selects events by the name');
    expect(() => app.task({ source: plain, name: "f", filter: 1 as unknown as () => boolean }, async () => undefined)).to.throw(TypeError, 'task "f": filter must be a function');
    expect(app.tasks).to.have.length(0);
  });
});
