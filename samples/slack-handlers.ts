import { Task, WebhookError, type TaskContext, type WebhookEvent } from "webhook-tasks";
import { slackCommand } from "./sources";

type SlashCommand = Record<string, string | string[]>;

/** `/echo hello` in Slack: the form body arrives parsed, the returned object is the reply. */
export class SlackHandlers {
  @Task({ source: slackCommand })
  async slashCommand(_ctx: TaskContext, event: WebhookEvent<SlashCommand>) {
    const { command, text, user_name: user } = event.body;
    if (typeof command !== "string") throw new WebhookError(400, "missing_command", "the form has no command field");
    return { response_type: "ephemeral", text: `${user ?? "someone"} said ${command} ${text ?? ""}`.trim() };
  }
}
