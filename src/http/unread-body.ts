import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { Socket } from "node:net";

/**
 * Bodies up to this size are read and thrown away after an early answer, which keeps the
 * connection; anything larger, or of unknown size (chunked), closes it instead. Node would
 * otherwise read and discard a refused body of any size, for as long as the client sends it.
 */
export const DRAIN_LIMIT_BYTES = 64 * 1024;

/**
 * Called just before a response's headers go out: when the request's body has not been read
 * and may be large, the answer says `Connection: close`, and once it is sent nothing more is
 * read from the connection (see lingerThenClose), instead of Node draining the body.
 */
export function closeIfBodyUnread(res: ServerResponse): void {
  const req = res.req as IncomingMessage | undefined;
  if (req === undefined || req.complete || res.headersSent) return;
  const chunked = req.headers["transfer-encoding"] !== undefined;
  const declared = Number(req.headers["content-length"] ?? 0);
  if (!chunked && !(declared > 0)) return; // no body: nothing left unread
  if (res.shouldKeepAlive && String(res.getHeader("connection") ?? "").toLowerCase() !== "close") {
    if (!chunked && declared <= DRAIN_LIMIT_BYTES) return;
    res.shouldKeepAlive = false;
  }
  lingerThenClose(req);
}

/** How long a connection closed on an unread body stays open, not reading, for the answer to arrive. */
export const LINGER_MS = 2_000;

/**
 * Closing a socket while the client is still sending makes the kernel answer with a reset, and
 * a client (or proxy: nginx reports "broken pipe" and a 502) may then lose the answer it has
 * not read yet. So instead: no more reading (what the client sends waits in the kernel, never
 * read), our side of the connection ends after the answer, and the socket is destroyed once the
 * client closes or after LINGER_MS. The bytes read stay bounded by the socket buffers.
 */
function lingerThenClose(req: IncomingMessage): void {
  // Node would otherwise read and discard the rest of the body once the answer is sent.
  (req as IncomingMessage & { _dumped?: boolean })._dumped = true;
  const socket = req.socket as Socket & { _handle?: { readStop?: () => number } | null };
  // Node calls destroySoon() once a "Connection: close" answer is written.
  socket.destroySoon = function (this: typeof socket): void {
    req.pause();
    this._handle?.readStop?.();
    if (this.writable) this.end();
    const timer = setTimeout(() => this.destroy(), LINGER_MS).unref();
    lingering.add(this);
    this.once("close", () => {
      clearTimeout(timer);
      lingering.delete(this);
    });
  };
}

const lingering = new Set<Socket>();

/** Ends the lingering of `server`'s connections at once (the server is stopping). */
export function destroyLingering(server: Server): void {
  for (const socket of lingering) {
    if ((socket as Socket & { server?: unknown }).server === server) socket.destroy();
  }
}

/**
 * For requests handed to the user's Express app, whose routes answer as they like: applies
 * `closeIfBodyUnread` whenever headers are written, and sends "100 Continue" to a client that
 * waits for it only when something starts reading the body. A route that answers without
 * reading (404, 403) so costs the client no upload.
 */
export function guardExpressRequest(req: IncomingMessage, res: ServerResponse, expectsContinue: boolean): void {
  if (expectsContinue) {
    const read = req._read;
    req._read = function (this: IncomingMessage, size: number): void {
      req._read = read;
      if (!res.headersSent) res.writeContinue();
      read.call(this, size);
    };
  }
  if (req.headers["transfer-encoding"] === undefined && req.headers["content-length"] === undefined) return;
  const writeHead = res.writeHead;
  res.writeHead = function (this: ServerResponse, ...args: Parameters<ServerResponse["writeHead"]>): ServerResponse {
    closeIfBodyUnread(this);
    return writeHead.apply(this, args);
  } as ServerResponse["writeHead"];
}
