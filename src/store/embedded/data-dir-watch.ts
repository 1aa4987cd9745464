import type { StoreRefusal } from "../store";
import { StoreRefusedError } from "../store-errors";
import type { DataDirGuard, DataDirLostError } from "./data-dir-guard";
import type { Logger } from "../../util/logger";

/** How often the store checks that its directory is still the one it opened. */
const DIR_CHECK_MS = 500;

export const DIR_LOST: StoreRefusal = { code: "store_unavailable", message: "the store's data directory is gone", retryAfterSeconds: 30 };

/**
 * The open store's watch on its directory: a DataDirGuard checked now and then, and once the
 * directory is lost, the store refuses for good (until closed and opened again).
 */
export class DataDirWatch {
  private guard: { readonly files: DataDirGuard; readonly timer: NodeJS.Timeout } | undefined;
  /** The directory was deleted or replaced: refused for good (until closed and opened again). */
  private lostError: DataDirLostError | undefined;

  constructor(
    private readonly dir: string,
    private readonly logger: Logger,
  ) {}

  get lost(): DataDirLostError | undefined {
    return this.lostError;
  }

  /** Watches a newly opened directory: what was lost before is forgotten. */
  start(files: DataDirGuard): void {
    this.lostError = undefined;
    const timer = setInterval(() => {
      const lost = files.check();
      if (lost) this.dirLost(lost);
    }, DIR_CHECK_MS);
    timer.unref();
    this.guard = { files, timer };
  }

  stop(): void {
    if (!this.guard) return;
    clearInterval(this.guard.timer);
    this.guard.files.close();
    this.guard = undefined;
  }

  /** Committed into a deleted file is not committed: never acknowledged. */
  refuseIfDataFileLost(): void {
    const lost = this.lostError ?? this.guard?.files.dataFileDeleted();
    if (lost) {
      this.dirLost(lost);
      throw new StoreRefusedError(DIR_LOST, { cause: lost });
    }
  }

  /**
   * What was written since the directory went is in deleted files, and goes with the process:
   * nothing more is acknowledged, for good. A new directory is a new, empty store, which only a
   * restart may start on.
   */
  dirLost(error: DataDirLostError): void {
    if (this.lostError) return;
    this.lostError = error;
    this.stop();
    this.logger.error(
      { dir: this.dir, reason: error.reason },
      "the data directory was deleted or replaced while the store had it open: every webhook is answered 503 from now on; restart the app once the directory is back (or to start empty)",
    );
  }
}
