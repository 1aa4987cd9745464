import { CoreApp, WebhookSource, type WebhookEvent } from "webhook-tasks";

type GitHubEvent = WebhookEvent<{ action?: string }>;
const github = new WebhookSource({ path: "/hooks/github", port: 8080 });
const isEvent = (name: string) => (event: WebhookEvent) => event.headers["x-github-event"] === name;

export const app = new CoreApp("org-hooks");
app.task({ source: github, name: "pushes", filter: isEvent("push") }, async (ctx) => {
  ctx.logger.info("push");
});
app.task({ source: github, name: "pulls", filter: isEvent("pull_request") }, async (ctx, event: GitHubEvent) => {
  ctx.logger.info({ action: event.body.action }, "pull request");
});
app.task({ source: github, name: "audit" }, async (ctx, event: GitHubEvent) => {
  ctx.logger.info({ event: event.headers["x-github-event"] }, "audited"); // every event
});
