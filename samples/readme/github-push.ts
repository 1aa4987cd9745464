import { CoreApp, GitHubSignature, Queue, WebhookSource, type WebhookEvent } from "webhook-tasks";

interface PushPayload {
  ref: string;
  repository: { full_name: string };
  commits: unknown[];
}

export interface Push {
  repository: string;
  branch: string;
  commits: number;
}

// From the environment, with no fallback: unset, the app stops at start-up and says why.
export const GH_SECRET = process.env.GH_SECRET!;

/** A typed queue: the first task must emit a Push, the second receives one. */
export const pushes = new Queue<Push>("pushes");

export const github = new WebhookSource({
  path: "/hooks/github",
  port: Number(process.env.PORT ?? 8080),
  auth: new GitHubSignature(GH_SECRET),
});

export const app = new CoreApp("github-app");

app.task({ source: github, emit: pushes }, async (ctx, event: WebhookEvent<PushPayload>) => {
  if (event.headers["x-github-event"] !== "push") return undefined; // nothing to emit
  return {
    repository: event.body.repository.full_name,
    branch: event.body.ref.replace(/^refs\/heads\//, ""),
    commits: event.body.commits.length,
  };
});

app.task({ source: pushes }, async (ctx, push) => {
  ctx.logger.info({ ...push }, "push recorded");
});

if (require.main === module) void app.run(); // Ctrl-C or SIGTERM: graceful stop
