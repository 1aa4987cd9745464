import pg from "pg";

const ignore = (): void => undefined;

/**
 * The connections of a store's own pool, from their first try until they end, so that a close
 * that runs out of time can cut them: a server that answers nothing (frozen, or behind a
 * network dropping packets) would otherwise hold every statement out until its own timeout,
 * and the pool's end after them.
 */
export class PoolConnections {
  private readonly open = new Set<pg.Client>();
  /** The class the pool makes its connections with (its `Client` option). */
  readonly Client: typeof pg.Client;

  constructor() {
    const open = this.open;
    this.Client = class TrackedClient extends pg.Client {
      constructor(config?: string | pg.ClientConfig) {
        super(config);
        open.add(this);
        this.once("end", () => open.delete(this));
      }
    };
  }

  get size(): number {
    return this.open.size;
  }

  /**
   * Destroys every connection's socket: their statements fail at once ("Connection
   * terminated"), and the pool's end completes. Returns how many were cut.
   */
  cut(): number {
    const cut = this.open.size;
    for (const client of this.open) {
      // A connection checked out of the pool has no listener of the pool's: its error must not go unheard.
      client.on("error", ignore);
      client.connection.stream.destroy();
    }
    return cut;
  }
}
