// Handlers of samples/worker.yaml: plain functions (ctx, event), referenced as "<file>:<export>".
"use strict";

exports.summarisePush = async function summarisePush(ctx, event) {
  if (event.headers["x-github-event"] !== "push") return undefined;
  return { repository: event.body.repository && event.body.repository.full_name, commits: (event.body.commits || []).length };
};

exports.recordPush = async function recordPush(ctx, push) {
  const key = `pushes:${push.repository}`;
  await ctx.state.set(key, ((await ctx.state.get(key)) || 0) + 1);
  ctx.logger.info("push recorded", push);
};

exports.slashCommand = async function slashCommand(ctx, event) {
  return { response_type: "ephemeral", text: `you said ${event.body.text || ""}` };
};
