import { Task, type TaskContext, type WebhookEvent } from "webhook-tasks";
import { githubHook } from "./sources";

interface PushPayload {
  ref?: string;
  repository?: { full_name?: string };
  commits?: unknown[];
}

export interface PushSummary {
  repository: string;
  branch: string;
  commits: number;
  delivery: string;
}

/** A GitHub push arrives, is summarised, and the summary goes to the "pushes" queue. */
export class GitHubHandlers {
  @Task({ source: githubHook, emit: "pushes" })
  async summarisePush(ctx: TaskContext, event: WebhookEvent<PushPayload>): Promise<PushSummary | undefined> {
    if (event.headers["x-github-event"] !== "push") return undefined; // nothing to emit
    return {
      repository: event.body.repository?.full_name ?? "unknown",
      branch: (event.body.ref ?? "").replace(/^refs\/heads\//, ""),
      commits: event.body.commits?.length ?? 0,
      delivery: event.headers["x-github-delivery"] ?? ctx.eventId,
    };
  }

  /** Consumes the "pushes" queue: a second task in the chain. */
  @Task({ source: "pushes" })
  async recordPush(ctx: TaskContext, push: PushSummary): Promise<void> {
    const count = ((await ctx.state.get<number>(`pushes:${push.repository}`)) ?? 0) + 1;
    await ctx.state.set(`pushes:${push.repository}`, count);
    ctx.logger.info({ repository: push.repository, branch: push.branch, commits: push.commits, total: count }, "push recorded");
  }
}
