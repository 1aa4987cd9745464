import type { IncomingMessage, ServerResponse } from "node:http";

/**
 * Bodies up to this size are read and thrown away after an early answer, which keeps the
 * connection; anything larger, or of unknown size (chunked), closes it instead. Node would
 * otherwise read and discard a refused body of any size, for as long as the client sends it.
 */
export const DRAIN_LIMIT_BYTES = 64 * 1024;

/**
 * Called just before a response's headers go out: when the request's body has not been read
 * and may be large, the answer says `Connection: close` and Node stops reading once it is
 * sent, instead of draining the body.
 */
export function closeIfBodyUnread(res: ServerResponse): void {
  const req = res.req as IncomingMessage | undefined;
  if (req === undefined || req.complete || res.headersSent || !res.shouldKeepAlive) return;
  const headers = req.headers;
  if (headers["transfer-encoding"] === undefined) {
    const declared = headers["content-length"];
    if (declared === undefined || Number(declared) <= DRAIN_LIMIT_BYTES) return;
  }
  res.shouldKeepAlive = false;
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
