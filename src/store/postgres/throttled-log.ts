import type { Logger } from "../../util/logger";
import { storeFailureDetail } from "../store-errors";

/**
 * Failure logs bounded in rate: a database that is down fails every statement, and one line per
 * statement would flood the logs. Per kind of failure, at most one line per `intervalMs` (with
 * how many were left out), then one "recovered" line when it works again. A kind that fails and
 * recovers over and over (a full disk: reads pass, writes fail) keeps its interval across its
 * recoveries, and says it recovered only after a failure line: two lines per interval at most.
 */
export class ThrottledLog {
  /** `told`: a failure line is out that no "recovered" line has answered yet. */
  private readonly kinds = new Map<string, { lastAt: number; suppressed: number; told: boolean }>();

  constructor(
    private readonly logger: Logger | undefined,
    private readonly intervalMs = 5_000,
  ) {}

  failed(kind: string, error: unknown, message: string): void {
    const now = Date.now();
    const seen = this.kinds.get(kind);
    if (seen && now - seen.lastAt < this.intervalMs) {
      seen.suppressed++;
      return;
    }
    this.kinds.set(kind, { lastAt: now, suppressed: 0, told: true });
    const fields: Record<string, unknown> = { store: "postgres", kind, error: storeFailureDetail(error) };
    if (seen && seen.suppressed > 0) fields.suppressed = seen.suppressed;
    this.logger?.error(fields, message);
  }

  /** Logs once that `kind` works again, if it had failed. */
  recovered(kind: string, message: string): void {
    const seen = this.kinds.get(kind);
    if (seen === undefined || !seen.told) return;
    seen.told = false;
    this.logger?.info({ store: "postgres", kind }, message);
  }
}
