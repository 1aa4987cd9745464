import { createHmac } from "node:crypto";
import { constantTimeEqual, Task, WebhookError, type TaskContext, type WebhookEvent } from "webhook-tasks";
import { signedHook } from "./sources";

const secret = process.env.SIGNING_SECRET ?? "dev-signing-secret";

/** The seed's handler-level check: HMAC-SHA256 hex of the raw bytes, compared in constant time. */
export class SignedHandlers {
  @Task({ source: signedHook })
  async verifiedDelivery(ctx: TaskContext, event: WebhookEvent) {
    const expected = createHmac("sha256", secret).update(ctx.rawBody).digest("hex");
    if (!constantTimeEqual(event.headers["x-signature"] ?? "", expected)) {
      // The sender is answered 401 and the event is dropped: it was never accepted.
      throw new WebhookError(401, "invalid_signature", "x-signature does not match the body");
    }
    ctx.logger.info("signed delivery verified", { bytes: ctx.rawBody.length });
  }
}
