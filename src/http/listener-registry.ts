import { Listener, ListenError, type ListenerTimeouts } from "./listener";

/** The app's listeners, one per host:port, created on first use and started together. */
export class ListenerRegistry {
  private readonly listeners = new Map<string, Listener>();
  private freePorts = false;

  constructor(private readonly timeouts: ListenerTimeouts = {}) {
    checkListenerOptions(timeouts);
  }

  /** The listener for host:port, created if needed. Sources with port 0 on one host share one. */
  get(host: string, port: number): Listener {
    const key = `${host}|${port}`;
    let listener = this.listeners.get(key);
    if (!listener) {
      this.listeners.set(key, (listener = new Listener(host, port, this.timeouts)));
      listener.bindAnyPort = this.freePorts;
    }
    return listener;
  }

  /**
   * A listener of its own for `owner` on host:port, apart from the sources' even with port 0
   * (the console on a free port beside sources on free ports).
   */
  own(owner: string, host: string, port: number): Listener {
    const key = `${owner}|${host}|${port}`;
    let listener = this.listeners.get(key);
    if (!listener) {
      this.listeners.set(key, (listener = new Listener(host, port, this.timeouts)));
      listener.bindAnyPort = this.freePorts;
    }
    return listener;
  }

  /** The listener for host:port if one was created (by a source, say), without creating it. */
  find(host: string, port: number): Listener | undefined {
    return this.listeners.get(`${host}|${port}`);
  }

  /** Tests: every listener binds a free port, one per configured host:port, as before. */
  bindFreePorts(): void {
    this.freePorts = true;
    for (const listener of this.listeners.values()) listener.bindAnyPort = true;
  }

  all(): Listener[] {
    return [...this.listeners.values()];
  }

  /** Starts every listener; if one cannot bind, those already started are closed again. */
  async listenAll(): Promise<void> {
    const started: Listener[] = [];
    try {
      for (const listener of this.listeners.values()) {
        await listener.listen().catch((error: unknown) => {
          throw explainConflict(error, listener, started);
        });
        started.push(listener);
      }
    } catch (error) {
      await Promise.all(started.map((l) => l.close(0)));
      throw error;
    }
  }

  async closeAll(timeoutMs: number): Promise<void> {
    await Promise.all(this.all().map((l) => l.close(timeoutMs)));
  }
}

/** When the clash is with another listener of this same app, say which; name a listener that is not the webhooks'. */
function explainConflict(error: unknown, listener: Listener, started: readonly Listener[]): unknown {
  if (!(error instanceof ListenError) || error.code !== "EADDRINUSE") return error;
  const sibling = started.find((l) => l.port === listener.requestedPort && l.host !== listener.host);
  if (!sibling) {
    if (listener.purpose === undefined) return error;
    return new ListenError(
      `${listener.purpose.name} cannot listen on ${listener.host}:${listener.requestedPort}: the address is already in use (${listener.purpose.hint})`,
      error.code,
      { cause: error },
    );
  }
  return new ListenError(
    `cannot listen on ${listener.host}:${listener.requestedPort}: this app already listens on ${sibling.host}:${sibling.port}, and the two cannot both bind`,
    error.code,
    { cause: error },
  );
}

const LISTENER_OPTIONS = ["headersTimeoutMs", "requestTimeoutMs", "keepAliveTimeoutMs", "firstByteTimeoutMs", "maxConnections"] as const;

/** Each option given is a positive integer; checked once, when the app is made. */
function checkListenerOptions(options: ListenerTimeouts): void {
  for (const name of LISTENER_OPTIONS) {
    const value: unknown = options[name];
    if (value !== undefined && (typeof value !== "number" || !Number.isInteger(value) || value < 1)) {
      throw new TypeError(`http.${name} must be a positive integer, got ${String(value)}`);
    }
  }
}
