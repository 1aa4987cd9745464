/**
 * Compile-time checks of event names: this file is part of the build, so the suite fails
 * when a line marked @ts-expect-error compiles (or when the rest does not). Nothing here runs.
 */
import { CoreApp, GitHubSignature, Queue, StripeSignature, Task, WebhookSource, type GitHubEvent, type StripeEvent, type TaskContext, type WebhookEvent } from "webhook-tasks";

const github = new WebhookSource({ path: "/github", port: 0, auth: new GitHubSignature("s") });
const stripe = new WebhookSource({ path: "/stripe", port: 0, auth: new StripeSignature("whsec_s") });
const app = new CoreApp("names", { store: "memory" });

// The source carries its sender in its type.
export const typed: WebhookSource<"github"> = github;

// One name: the body is that payload, and the name is known.
app.task({ source: github, on: "pull_request.opened" }, async (ctx, event) => {
  const title: string = event.body.pull_request.title;
  const name: "pull_request.opened" = event.name;
  // @ts-expect-error an opened pull request's payload has no `pusher`
  event.body.pusher;
  return title + name;
});

// @ts-expect-error the handler takes opened pull requests, the task gets pushes
app.task({ source: github, on: "push" }, async (ctx, event: GitHubEvent<"pull_request.opened">) => event.body.number);
// @ts-expect-error the same with a batch: the handler takes opened pull requests, the task gets pushes
app.task({ source: github, on: "push", batch: { maxSize: 2, maxWaitMs: 10 } }, async (ctx, events: GitHubEvent<"pull_request.opened">[]) => events.length);
// @ts-expect-error a batch of pushes is an array, not one push
app.task({ source: github, on: "push", batch: { maxSize: 2, maxWaitMs: 10 } }, async (ctx, event: GitHubEvent<"push">) => event.body.ref);
// Annotating the event the typed overload would give, or a wider one, still compiles.
app.task({ source: github, on: "pull_request.opened" }, async (ctx, event: GitHubEvent<"pull_request">) => event.name);
app.task({ source: github, on: "push" }, async (ctx, event: WebhookEvent<{ ref: string }>) => event.body.ref);
// Without `on`, the handler says what body it takes.
app.task({ source: github, name: "any-github" }, async (ctx, event: WebhookEvent<{ ref: string }>) => event.body.ref);

// @ts-expect-error "pull_request.opend" is not a GitHub event
app.task({ source: github, on: "pull_request.opend" }, async () => undefined);

// An event without actions, a parent name (every action), a list.
app.task({ source: github, on: "push" }, async (ctx, event) => event.body.ref);
app.task({ source: github, on: "pull_request" }, async (ctx, event) => {
  const action: string = event.body.action;
  if (event.name === "pull_request.closed") return event.body.pull_request.merged;
  return action;
});
app.task({ source: github, on: ["issues.opened", "issue_comment.created"] }, async (ctx, event) => event.body.issue.number);
app.task({ source: github, on: "*" }, async (ctx, event) => event.name);

// Stripe: Stripe.Event narrowed by its type, wildcards on dotted segments.
app.task({ source: stripe, on: "checkout.session.completed" }, async (ctx, event) => {
  const session: string = event.body.data.object.id;
  // @ts-expect-error a checkout session has no `amount_paid` (an invoice has)
  event.body.data.object.amount_paid;
  return session;
});
app.task({ source: stripe, on: "invoice.*" }, async (ctx, event) => event.body.data.object.amount_paid);
// @ts-expect-error "invoice.payed" is not a Stripe event
app.task({ source: stripe, on: "invoice.payed" }, async () => undefined);

// A filter gets the same typed event.
app.task(
  { source: github, on: "pull_request.opened", filter: (event) => event.body.pull_request.base.ref === "main" },
  async (ctx, event) => event.body.number,
);

// Senders without typed events take any name (from their verifier or `eventName`).
const partner = new WebhookSource({ path: "/partner", port: 0, eventName: (event) => event.headers["x-partner-event"] });
app.task({ source: partner, on: "order.created" }, async (ctx, event: WebhookEvent<{ id: string }>) => event.body.id);

// A typed queue's messages have no names.
const numbers = new Queue<number>("numbers");
// @ts-expect-error on needs named events, and queue messages have none
app.task({ source: numbers, on: "push" }, async () => undefined);
// A filter on a queue gets its values.
app.task({ source: numbers, filter: (n) => n > 1 }, async (ctx, n) => n + 1);

// A queue of literal unions: the returned literal is not widened to string.
const kinds = new Queue<{ kind: "a" | "b" }>("kinds");
app.task({ source: new WebhookSource({ path: "/kinds", port: 0 }), emit: kinds }, async () => ({ kind: "a" }));
app.task({ source: github, on: "push", emit: kinds }, async () => ({ kind: "b" }));
// @ts-expect-error "c" is not a kind
app.task({ source: new WebhookSource({ path: "/kinds2", port: 0 }), emit: kinds }, async () => ({ kind: "c" }));

// Decorators: the same names, and the method must take the event `on` selects.
export class GitHubHandlers {
  @Task({ source: github, on: "pull_request.opened" })
  async opened(ctx: TaskContext, event: GitHubEvent<"pull_request.opened">): Promise<string> {
    return event.body.pull_request.title;
  }

  @Task({ source: stripe, on: "invoice.*" })
  async invoice(ctx: TaskContext, event: StripeEvent<"invoice.*">): Promise<number> {
    return event.body.data.object.amount_due;
  }

  // @ts-expect-error the method takes pushes, the task gets opened pull requests
  @Task({ source: github, on: "pull_request.opened" })
  async mismatched(ctx: TaskContext, event: GitHubEvent<"push">): Promise<void> {
    ctx.logger.info({ ref: event.body.ref }, "push");
  }

  // @ts-expect-error "pull_reqest" is not a GitHub event
  @Task({ source: github, on: "pull_reqest" })
  async misspelt(): Promise<void> {}
}
