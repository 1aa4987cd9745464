// Handlers of samples/worker.yaml: plain functions (ctx, event), referenced as "<file>:<export>".
"use strict";

exports.summarisePush = async function summarisePush(ctx, event) {
  if (event.headers["x-github-event"] !== "push") return undefined; // nothing to emit
  const repository = (event.body.repository && event.body.repository.full_name) || "unknown";
  return { repository, branch: String(event.body.ref || "").replace(/^refs\/heads\//, ""), commits: (event.body.commits || []).length };
};

exports.recordPush = async function recordPush(ctx, push) {
  const key = `pushes:${push.repository}`;
  const total = ((await ctx.state.get(key)) || 0) + 1;
  await ctx.state.set(key, total);
  ctx.logger.info({ ...push, total }, "push recorded");
};

exports.slashCommand = async function slashCommand(ctx, event) {
  return { response_type: "ephemeral", text: `${event.body.user_name || "someone"} said ${event.body.command} ${event.body.text || ""}`.trim() };
};

// Repeated x-event-ids never get here: the source's `dedupe` answers them itself.
exports.receiveOrder = async function receiveOrder(ctx, event) {
  ctx.logger.info({ order: event.body.id, deliveryId: event.headers["x-event-id"] }, "order processed");
};

// The signature was checked by the source's `auth` (type hmac) before this event existed.
exports.verifiedDelivery = async function verifiedDelivery(ctx, event) {
  ctx.logger.info({ bytes: ctx.rawBody.length }, "signed delivery verified");
};
