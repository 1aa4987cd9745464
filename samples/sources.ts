import { BearerAuth, WebhookResponse, WebhookSource } from "webhook-tasks";
import { secretFromEnv } from "./development-secret";

// One port for every sample endpoint: they share one server and are told apart by path.
const host = process.env.HOST ?? "127.0.0.1";
const port = Number(process.env.PORT ?? 8080);

/** GitHub-style JSON deliveries. */
export const githubHook = new WebhookSource({ path: "/hooks/github", methods: ["POST"], host, port, parser: "json" });

/** Slack-style form-encoded slash commands, answered with the task's result. */
export const slackCommand = new WebhookSource({ path: "/hooks/slack/command", host, port, parser: "form", reply: "result", ackTimeoutMs: 2500 });

/** The orders endpoint's bearer token; without ORDERS_TOKEN, a development one (printed at start). */
export const ORDERS_TOKEN = secretFromEnv("ORDERS_TOKEN", "dev-orders-token");

/** Any sender that retries: duplicates are dropped by the task through ctx.state. */
export const ordersHook = new WebhookSource({
  path: "/hooks/orders",
  methods: ["POST", "PUT"],
  host,
  port,
  auth: new BearerAuth(ORDERS_TOKEN),
  response: new WebhookResponse({ status_code: 200, body: { ok: true }, headers: { "x-served-by": "samples" } }),
});

/**
 * A sender that signs the raw body with HMAC-SHA256 in `x-signature`. `reply: "result"` lets
 * the handler's WebhookError answer the sender (401) instead of a 202.
 */
export const signedHook = new WebhookSource({ path: "/hooks/signed", host, port, reply: "result" });
