import type { IncomingMessage } from "node:http";

/** The request body could not be read: too large (413) or the client went away (no answer possible). */
export class BodyReadError extends Error {
  constructor(
    readonly status: 413 | 499,
    readonly code: "body_too_large" | "aborted",
    message: string,
  ) {
    super(message);
    this.name = "BodyReadError";
  }
}

/**
 * Reads the whole body once, as bytes, refusing more than `limit` bytes as early as possible
 * (from Content-Length when the client sends one). Slow senders are cut by the server's
 * request timeout (408), so no timer is armed here.
 */
export function readBody(req: IncomingMessage, limit: number, beforeRead?: () => void): Promise<Buffer> {
  const declared = req.headers["content-length"];
  if (declared !== undefined && Number(declared) > limit) {
    return Promise.reject(tooLarge(limit));
  }
  // `beforeRead` (sending "100 Continue") runs only once the declared size is known to fit.
  beforeRead?.();
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    req.on("data", (chunk: Buffer) => {
      if (done) return;
      size += chunk.length;
      if (size > limit) {
        done = true;
        reject(tooLarge(limit));
        return;
      }
      chunks.push(chunk);
    });
    req.on("end", () => {
      if (done) return;
      done = true;
      resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size));
    });
    req.on("close", () => {
      if (done) return;
      done = true;
      reject(new BodyReadError(499, "aborted", "the client closed the connection before the body was complete"));
    });
  });
}

function tooLarge(limit: number): BodyReadError {
  return new BodyReadError(413, "body_too_large", `the body is larger than ${limit} bytes`);
}
