import type { PostgresPool, PostgresPoolClient } from "./postgres-options";
import type { ThrottledLog } from "./throttled-log";

export interface NotificationListenerOptions {
  readonly pool: PostgresPool;
  /** The channel every process of the schema notifies (the schema's name). */
  readonly channel: string;
  /** This process's token: its own notifications are skipped (it woke its listeners already). */
  readonly token: string;
  /** Another process made work available in `queue`. */
  readonly onQueue: (queue: string) => void;
  /** Another process paused or resumed a task (its payload is its token then `pausesNotice`). */
  readonly onPauses?: () => void;
  readonly pausesNotice?: string;
  /** Listening again after a gap in which notifications may have been missed. */
  readonly onRelistening: () => void;
  readonly log: ThrottledLog;
  readonly statementTimeoutMs: number;
  /**
   * How often the listening connection is checked with a statement of its own. An idle
   * connection whose server vanished without a word (a host gone, a network that drops
   * packets) would otherwise pass for alive for hours, its notifications lost.
   */
  readonly heartbeatMs: number;
}

const MIN_RETRY_MS = 500;
const MAX_RETRY_MS = 10_000;

/**
 * LISTEN on a connection of its own, so that processes sharing a schema wake each other when
 * they add work. A lost connection is replaced, with a growing pause between tries (never a
 * tight loop); meanwhile the runners' own polling finds the work, later.
 */
export class NotificationListener {
  private client: PostgresPoolClient | undefined;
  private running = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private retryMs = MIN_RETRY_MS;
  private connecting: Promise<void> | undefined;
  /** A heartbeat's statement is out: the next waits for it. */
  private checking = false;
  /** False until the first try: only a later success can follow a gap. */
  private tried = false;

  constructor(private readonly options: NotificationListenerOptions) {}

  get listening(): boolean {
    return this.client !== undefined;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.connecting = this.connect();
    this.heartbeatTimer = setInterval(() => this.heartbeat(), this.options.heartbeatMs);
    this.heartbeatTimer.unref();
  }

  /** The database is back: try at once rather than at the end of the current pause. */
  retryNow(): void {
    if (!this.running || this.client || !this.retryTimer) return;
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    this.retryMs = MIN_RETRY_MS;
    this.connecting = this.connect();
  }

  async stop(): Promise<void> {
    this.running = false;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    clearInterval(this.heartbeatTimer);
    this.heartbeatTimer = undefined;
    await this.connecting;
    this.drop(undefined, undefined);
  }

  private async connect(): Promise<void> {
    const { pool, channel, token, log } = this.options;
    let client: PostgresPoolClient | undefined;
    try {
      client = await pool.connect();
      const current = client;
      current.on("error", (error) => this.lost(current, error));
      current.on("end", () => this.lost(current, new Error("the listening connection ended")));
      current.on("notification", (message) => {
        if (message.channel !== channel || message.payload === undefined) return;
        const { pausesNotice, onPauses } = this.options;
        if (pausesNotice !== undefined && message.payload.endsWith(pausesNotice) && !message.payload.includes("\n")) {
          if (message.payload !== token + pausesNotice) onPauses?.();
          return;
        }
        const newline = message.payload.indexOf("\n");
        if (newline < 0 || message.payload.slice(0, newline) === token) return;
        this.options.onQueue(message.payload.slice(newline + 1));
      });
      await current.query({ text: `LISTEN "${channel}"`, query_timeout: this.options.statementTimeoutMs });
    } catch (error) {
      this.tried = true;
      if (client) this.drop(client, error);
      if (this.running) {
        log.failed("listener", error, "cannot listen for notifications from other processes; trying again");
        this.retryLater();
      }
      return;
    }
    if (!this.running) return this.drop(client, undefined);
    this.client = client;
    this.retryMs = MIN_RETRY_MS;
    log.recovered("listener", "listening for notifications again");
    if (this.tried) this.options.onRelistening();
    this.tried = true;
  }

  /** A statement on the listening connection: one that fails or outlasts its timeout means the connection is gone. */
  private heartbeat(): void {
    const client = this.client;
    if (client === undefined || this.checking) return;
    this.checking = true;
    client.query({ text: "SELECT 1", query_timeout: this.options.statementTimeoutMs }).then(
      () => {
        this.checking = false;
      },
      (error: unknown) => {
        this.checking = false;
        this.lost(client, error instanceof Error ? error : new Error(String(error)));
      },
    );
  }

  private lost(client: PostgresPoolClient, error: Error): void {
    if (this.client !== client) return;
    this.drop(client, error);
    if (!this.running) return;
    this.options.log.failed("listener", error, "lost the connection listening for notifications; reconnecting");
    this.retryLater();
  }

  private drop(client: PostgresPoolClient | undefined, error: unknown): void {
    const target = client ?? this.client;
    if (!target) return;
    if (this.client === target) this.client = undefined;
    // Keep a handler: a socket may still report an error after it is given up.
    target.removeAllListeners("notification");
    target.removeAllListeners("end");
    target.removeAllListeners("error");
    target.on("error", () => undefined);
    // Never back to the pool: a LISTENing connection would hand its notifications to whoever gets it.
    target.release(error instanceof Error ? error : true);
  }

  private retryLater(): void {
    if (this.retryTimer || !this.running) return;
    const delay = this.retryMs;
    this.retryMs = Math.min(this.retryMs * 2, MAX_RETRY_MS);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      if (this.running) this.connecting = this.connect();
    }, delay);
    this.retryTimer.unref();
  }
}
