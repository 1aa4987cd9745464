/**
 * At most `perWindow` lines per key per window; what is left out is counted and reported
 * once, as one line, when the window ends. Keys must be bounded (source × code).
 */
export class LineRateLimiter {
  private readonly windows = new Map<string, { start: number; lines: number; suppressed: number; timer: NodeJS.Timeout | undefined }>();

  constructor(
    private readonly perWindow: number,
    private readonly windowMs: number,
    /** Writes the summary of a window: how many lines were left out for `key`. */
    private readonly onSuppressed: (key: string, suppressed: number) => void,
  ) {}

  /** True when a line for `key` may be written now. */
  allow(key: string, now = Date.now()): boolean {
    let window = this.windows.get(key);
    if (window === undefined || now - window.start >= this.windowMs) {
      if (window !== undefined) this.flush(key, window);
      window = { start: now, lines: 0, suppressed: 0, timer: undefined };
      this.windows.set(key, window);
    }
    if (window.lines < this.perWindow) {
      window.lines++;
      return true;
    }
    window.suppressed++;
    if (window.timer === undefined) {
      const ending = window;
      ending.timer = setTimeout(() => {
        if (this.windows.get(key) === ending) this.windows.delete(key);
        this.flush(key, ending);
      }, Math.max(0, ending.start + this.windowMs - now));
      ending.timer.unref();
    }
    return false;
  }

  private flush(key: string, window: { suppressed: number; timer: NodeJS.Timeout | undefined }): void {
    if (window.timer !== undefined) clearTimeout(window.timer);
    window.timer = undefined;
    const suppressed = window.suppressed;
    window.suppressed = 0;
    if (suppressed > 0) this.onSuppressed(key, suppressed);
  }
}
