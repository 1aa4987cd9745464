import { isLoopbackHost } from "../http/loopback-host";
import type { Source } from "../sources/source";
import { WebhookSource } from "../sources/webhook/webhook-source";
import type { Logger } from "../util/logger";

/**
 * Warns, once at start, of each webhook source that listens beyond this machine without `auth`:
 * anyone who finds its URL can push events into its tasks. Not refused: a private network or a
 * proxy that checks may stand in front of it, which the app cannot see.
 */
export function warnUnauthenticated(sources: Iterable<Source>, logger: Logger): void {
  for (const source of sources) {
    if (!(source instanceof WebhookSource)) continue;
    const { host, auth } = source.options;
    if (auth !== undefined || isLoopbackHost(host)) continue;
    logger.warn(
      { source: source.sourceName, url: source.url },
      `webhook source "${source.sourceName}" listens on ${host} without auth: anyone who can reach ${source.url} can push events into its tasks; ` +
        "give it the sender's signature verifier or BearerAuth, or listen on 127.0.0.1 behind a proxy that checks",
    );
  }
}
