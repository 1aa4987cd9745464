import type { Logger } from "../util/logger";
import type { AppObserver, RequestOutcome } from "./app-observer";
import { LineRateLimiter } from "./rate-limit";

/** Lines per source and code per second before the rest are counted instead. */
export const REFUSAL_LINES_PER_SECOND = 10;

/**
 * One log line per refused request (status >= 400): `warn` for authentication failures (401,
 * 403), `info` for the rest. Never a header or a body: only source, status, code, client,
 * request id, method and path. Rate-limited per source and code, so a flood of bad requests
 * cannot flood the logs: past the limit one line says how many were left out.
 */
export class RefusalLogObserver implements AppObserver {
  private readonly limiter: LineRateLimiter;
  private readonly last = new Map<string, { source: string; origin: string; status: number; code: string }>();

  constructor(private readonly logger: Logger, linesPerSecond = REFUSAL_LINES_PER_SECOND) {
    this.limiter = new LineRateLimiter(linesPerSecond, 1_000, (key, suppressed) => {
      const about = this.last.get(key);
      this.last.delete(key);
      if (about === undefined) return;
      const { source, origin, status, code } = about;
      this.logger.info({ source, origin, status, code, suppressed }, `${suppressed} more refusals suppressed`);
    });
  }

  onRequest(outcome: RequestOutcome): void {
    const refusal = outcome.refusal;
    if (refusal === undefined) return;
    const { source, origin, status, code, method } = outcome;
    const key = `${source}\u0000${origin}\u0000${code}`;
    if (!this.limiter.allow(key)) {
      if (!this.last.has(key)) this.last.set(key, { source, origin, status, code });
      return;
    }
    const fields = { source, origin, status, code, method, path: refusal.path, client: refusal.client, requestId: refusal.requestId };
    const message = `request refused: ${status} ${code}`;
    if (status === 401 || status === 403) this.logger.warn(fields, message);
    else this.logger.info(fields, message);
  }
}
