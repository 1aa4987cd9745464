import type { JsonValue } from "./webhook-response";

/**
 * Thrown by a task whose source answers with the task's result (`reply: "result"`), to choose
 * the HTTP answer: `throw new WebhookError(400, "invalid_payload", "missing field: id")`.
 * Any other error answers 500 with a generic body, so internals never leak to a sender.
 */
export class WebhookError extends Error {
  readonly status: number;
  readonly code: string;
  readonly body: JsonValue;

  constructor(status: number, code: string, message: string, body?: JsonValue) {
    super(message);
    if (!Number.isInteger(status) || status < 400 || status > 599) throw new TypeError(`WebhookError: status must be 400..599, got ${status}`);
    this.name = "WebhookError";
    this.status = status;
    this.code = code;
    this.body = body ?? { error: code, message };
  }
}
