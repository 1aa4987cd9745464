import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { Server as NetServer, type Socket } from "node:net";
import { destroyLingering } from "./unread-body";

/** How often a closing server looks for connections gone idle. */
const SWEEP_MS = 50;

/**
 * Closes `server` (its open connections in `sockets`) without resetting a request a client
 * sent: stops accepting, lets the requests in flight be answered, each with `Connection: close`,
 * closes connections once idle, and after `timeoutMs` cuts whatever is left.
 *
 * The threat is the keep-alive race: a client sends its next request on a connection as the
 * server closes it, and gets a reset instead of an answer or a clean refusal (a proxy such as
 * nginx answers its own client 502). Node's `server.close()` destroys at once every connection
 * not answering a request, those holding a request still unread in their buffer included.
 */
export async function closeGracefully(server: Server, sockets: ReadonlySet<Socket>, timeoutMs: number): Promise<void> {
  endKeepAlive(server, sockets);
  // Stops accepting, as the http server's close() does, without its closing of idle connections.
  const closed = new Promise<void>((resolve) => NetServer.prototype.close.call(server, () => resolve()));
  destroyLingering(server);
  // A connection is closed once idle and quiet for a whole sweep, a poll of the sockets lying
  // between two sweeps: a request sent just as the previous answer arrived is read and answered.
  const readAt = new Map<Socket, number>();
  const sweep = setInterval(() => {
    for (const socket of sockets) {
      if (answerOf(socket) != null) continue;
      if (readAt.get(socket) === socket.bytesRead) socket.destroy();
      else readAt.set(socket, socket.bytesRead);
    }
    destroyLingering(server);
  }, SWEEP_MS);
  const deadline = setTimeout(() => server.closeAllConnections(), timeoutMs);
  try {
    await closed;
  } finally {
    clearInterval(sweep);
    clearTimeout(deadline);
    // What the http server's close() does besides: its timer checking request timeouts stops.
    server.close();
  }
}

/** The answers under way, and those to requests still arriving on open connections, say `Connection: close`. */
function endKeepAlive(server: Server, sockets: ReadonlySet<Socket>): void {
  for (const socket of sockets) {
    const res = answerOf(socket);
    if (res != null && !res.headersSent) res.shouldKeepAlive = false;
  }
  // First among the listeners: before the request's own, which may answer at once.
  const closeAfter = (_req: IncomingMessage, res: ServerResponse): void => void (res.shouldKeepAlive = false);
  server.prependListener("request", closeAfter);
  server.prependListener("checkContinue", closeAfter);
}

/** The answer a connection is writing or will write next (Node's own field): none when it is idle. */
function answerOf(socket: Socket): ServerResponse | null | undefined {
  return (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
}
