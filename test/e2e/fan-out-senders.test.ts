import { randomBytes } from "node:crypto";
import { expect } from "chai";
import Stripe from "stripe";
import { GitHubSignature, StripeSignature, type TaskContext, type WebhookEvent } from "../../src/index";
import { Collector, sleep, useApps, webhook } from "../helpers/app";
import { send } from "../helpers/http-client";
import { until } from "../helpers/wait";

type Octokit = typeof import("@octokit/webhooks-methods");

const SECRET = "fan-out-github-secret";
const WHSEC = "whsec_" + randomBytes(32).toString("base64");
const FAST_RETRY = { initialDelayMs: 5, maxDelayMs: 5, factor: 1 };

/**
 * One endpoint per sender, as senders give one URL for everything: each task takes exactly the
 * events its `on` (and `filter`) names, from deliveries signed by the senders' own libraries.
 */
describe("fan-out by event name, from deliveries signed as the senders sign them", () => {
  const newApp = useApps();
  let octokit: Octokit;
  before(async () => {
    octokit = await import("@octokit/webhooks-methods");
  });

  it("GitHub: push, pull_request.opened, pull_request on one repository, and *: each task gets exactly its events; one failing to its dead letter leaves the others at one run each", async () => {
    const app = newApp();
    const github = webhook({ path: "/hooks/github", auth: new GitHubSignature(SECRET) });
    const pushes = new Collector();
    const opened = new Collector();
    const octoPulls = new Collector();
    let everythingRuns = 0;
    const everything: string[] = [];
    app.task({ source: github, name: "pushes", on: "push" }, pushes.handler);
    app.task({ source: github, name: "opened", on: "pull_request.opened" }, opened.handler);
    app.task(
      { source: github, name: "octo-pulls", on: "pull_request", filter: (e) => (e.body as { repository: { full_name: string } }).repository.full_name === "octo/repo" },
      octoPulls.handler,
    );
    app.task({ source: github, name: "everything", on: "*", retry: { attempts: 2, ...FAST_RETRY } }, async (ctx: TaskContext, event: WebhookEvent) => {
      everythingRuns++;
      everything.push(event.name!);
      throw new Error("this task is broken");
    });
    await app.start();

    const deliveries: Array<[string, Record<string, unknown>]> = [
      ["push", { ref: "refs/heads/main", repository: { full_name: "octo/repo" } }],
      ["pull_request", { action: "opened", number: 1, repository: { full_name: "octo/repo" } }],
      ["pull_request", { action: "closed", number: 2, repository: { full_name: "octo/repo" } }],
      ["pull_request", { action: "opened", number: 3, repository: { full_name: "other/repo" } }],
      ["issues", { action: "opened", number: 4, repository: { full_name: "octo/repo" } }],
    ];
    for (const [i, [event, payload]] of deliveries.entries()) {
      const body = JSON.stringify(payload);
      const headers = { "content-type": "application/json", "x-github-event": event, "x-github-delivery": `d-${i}`, "x-hub-signature-256": await octokit.sign(SECRET, body) };
      const reply = await send(github.url, { method: "POST", body, headers });
      expect(reply.status, reply.text).to.equal(202);
    }

    await pushes.waitFor(1);
    await opened.waitFor(2);
    await octoPulls.waitFor(2);
    await until(async () => (await app.deadLetters.list()).length === 5);
    await sleep(100);
    const numbers = (c: Collector) => c.events.map((e) => (e.body as { number?: number }).number ?? e.name);
    expect(numbers(pushes)).to.deep.equal(["push"]);
    expect(numbers(opened)).to.deep.equal([1, 3]);
    expect(numbers(octoPulls)).to.deep.equal([1, 2]);
    // Every named event reached `*`, each run twice (its two attempts).
    expect([...everything].sort()).to.deep.equal(["issues.opened", "pull_request.closed", "pull_request.opened", "pull_request.opened", "push"].flatMap((n) => [n, n]).sort());
    // The broken task used its two attempts on each of the five events; the others ran once per copy.
    expect(everythingRuns).to.equal(10);
    expect(pushes.count + opened.count + octoPulls.count).to.equal(5);
    const letters = await app.deadLetters.list();
    expect(new Set(letters.map((l) => l.task))).to.deep.equal(new Set(["everything"]));
  });

  it("Stripe: invoice.* and checkout.session.completed, signed with the stripe package's test header", async () => {
    const app = newApp();
    const stripeHook = webhook({ path: "/hooks/stripe", auth: new StripeSignature(WHSEC) });
    const invoices = new Collector();
    const checkouts = new Collector();
    app.task({ source: stripeHook, name: "invoices", on: "invoice.*" }, invoices.handler);
    app.task({ source: stripeHook, name: "checkouts", on: "checkout.session.completed" }, checkouts.handler);
    await app.start();

    const stripe = new Stripe("sk_test_x");
    const types = ["invoice.paid", "checkout.session.completed", "invoice.payment_failed", "customer.created", "invoice"];
    const answers: Array<{ status: number; body: unknown }> = [];
    for (const [i, type] of types.entries()) {
      const body = JSON.stringify({ id: `evt_${i}`, object: "event", type, data: { object: { id: `obj_${i}` } } });
      const signature = stripe.webhooks.generateTestHeaderString({ payload: body, secret: WHSEC });
      const reply = await send(stripeHook.url, { method: "POST", body, headers: { "content-type": "application/json", "stripe-signature": signature } });
      answers.push({ status: reply.status, body: reply.json() });
    }

    await invoices.waitFor(2);
    await checkouts.waitFor(1);
    await sleep(100);
    expect(invoices.events.map((e) => e.name)).to.deep.equal(["invoice.paid", "invoice.payment_failed"]);
    expect(checkouts.events.map((e) => e.name)).to.deep.equal(["checkout.session.completed"]);
    // Events no task takes are answered 2xx (a sender disables an endpoint that keeps failing) and stored nowhere.
    expect(answers.map((a) => a.status)).to.deep.equal([202, 202, 202, 200, 200]);
    expect(answers[3].body).to.include({ accepted: true, routed: false }).and.have.property("id").that.is.a("string");
  });
});
