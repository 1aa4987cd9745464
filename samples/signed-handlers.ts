import { Task, verifyHmac, type TaskContext, type WebhookEvent } from "webhook-tasks";
import { secretFromEnv } from "./development-secret";
import { signedHook } from "./sources";

const secret = secretFromEnv("SIGNING_SECRET", "dev-signing-secret");

/** The seed's handler-level check: HMAC-SHA256 hex of the raw bytes, compared in constant time. */
export class SignedHandlers {
  @Task({ source: signedHook })
  async verifiedDelivery(ctx: TaskContext, event: WebhookEvent) {
    // Throws a SignatureError (a WebhookError, 401) on a missing or wrong x-signature: with
    // `reply: "result"` the sender is answered 401 and the event is dropped, never processed.
    verifyHmac({ signature: event.headers["x-signature"], body: ctx.rawBody, secret });
    ctx.logger.info({ bytes: ctx.rawBody.length }, "signed delivery verified");
  }
}
