import type { IncomingMessage } from "node:http";
import type { Readable } from "node:stream";
import { contentCodings, decoderFor, SUPPORTED_CODINGS } from "./content-encoding";
import { echoed } from "./echoed-value";

export type BodyReadFailure =
  | { status: 400; code: "invalid_encoding" }
  | { status: 413; code: "body_too_large" }
  | { status: 415; code: "unsupported_encoding" }
  | { status: 499; code: "aborted" };

/**
 * The request body could not be read: it does not decode (400), is too large (413), arrives in
 * a coding we do not know (415), or the client went away (499: no answer possible).
 */
export class BodyReadError extends Error {
  constructor(
    readonly status: BodyReadFailure["status"],
    readonly code: BodyReadFailure["code"],
    message: string,
  ) {
    super(message);
    this.name = "BodyReadError";
  }
}

/** Called once with the body, or with why it could not be read (then `raw` is empty). */
export type BodyCallback = (error: BodyReadError | undefined, raw: Buffer) => void;

const EMPTY = Buffer.alloc(0);

/**
 * Reads the whole body once, refusing more than `limit` bytes as early as possible (from
 * Content-Length when the client sends one). A body sent with a Content-Encoding (gzip,
 * deflate, br) is decoded as it streams in and the limit applies to the decoded bytes, so a
 * decompression bomb is cut once it inflates past the limit. The result is the decoded payload:
 * the bytes the sender serialised and signed. Slow senders are cut by the server's request
 * timeout (408), so no timer is armed here.
 */
export function readBody(req: IncomingMessage, limit: number, beforeRead: (() => void) | undefined, done: BodyCallback): void {
  // A callback, not a promise: no promise, microtask and settle closures per request.
  const declared = req.headers["content-length"];
  if (declared !== undefined && Number(declared) > limit) {
    return done(tooLarge(limit), EMPTY);
  }
  const encoding = req.headers["content-encoding"];
  if (encoding === undefined) {
    beforeRead?.();
    return collectPlain(req, limit, done);
  }
  const codings = contentCodings(encoding);
  if (!Array.isArray(codings)) {
    return done(new BodyReadError(415, "unsupported_encoding", `content encoding ${echoed(codings.unsupported)} is not supported (${SUPPORTED_CODINGS} are)`), EMPTY);
  }
  // `beforeRead` (sending "100 Continue") runs only once the body is known to be acceptable.
  beforeRead?.();
  if (codings.length === 0) collectPlain(req, limit, done);
  else readDecoded(req, codings, limit, done);
}

/** Pipes the body through one decoder per coding, the last applied decoded first. */
function readDecoded(req: IncomingMessage, codings: readonly string[], limit: number, done: BodyCallback): void {
  const order = [...codings].reverse();
  const decoders = order.map(decoderFor);
  let output: Readable = req;
  for (const decoder of decoders) output = output.pipe(decoder);
  let wireBytes = 0;
  collect(req, output, limit, done, (fail, succeed) => {
    // The coded bytes are bounded too, as a declared Content-Length is: a chunked stream that
    // decodes to nothing (empty deflate blocks) would otherwise be read until the request timeout.
    req.on("data", (chunk: Buffer) => {
      wireBytes += chunk.length;
      if (wireBytes > limit) fail(tooLarge(limit));
    });
    decoders.forEach((decoder, i) =>
      decoder.on("error", () => {
        // An empty body is empty in every coding, though a decoder calls it truncated.
        if (wireBytes === 0 && req.complete) succeed();
        else fail(new BodyReadError(400, "invalid_encoding", `the body is not valid ${order[i]}`));
      }),
    );
    return () => {
      req.unpipe();
      for (const decoder of decoders) decoder.destroy();
    };
  });
}

/**
 * The body as sent (no Content-Encoding), the common case: two listeners, and no array for a
 * body that arrives in one chunk. A client that leaves before the end needs no listener: no
 * answer can reach it (the decoding path reports it, to stop its decoders).
 */
function collectPlain(req: IncomingMessage, limit: number, done: BodyCallback): void {
  let first: Buffer | undefined;
  let more: Buffer[] | undefined;
  let size = 0;
  let settled = false;
  req.on("data", (chunk: Buffer) => {
    if (settled) return;
    size += chunk.length;
    if (size > limit) {
      settled = true;
      return done(tooLarge(limit), EMPTY);
    }
    if (first === undefined) first = chunk;
    else (more ??= [first]).push(chunk);
  });
  req.on("end", () => {
    if (settled) return;
    settled = true;
    done(undefined, more !== undefined ? Buffer.concat(more, size) : (first ?? EMPTY));
  });
}

/**
 * Collects `output` (the request itself, or its last decoder) up to `limit` bytes. `decoding`
 * wires the decoders' errors and returns what stops them early.
 */
function collect(
  req: IncomingMessage,
  output: Readable,
  limit: number,
  done: BodyCallback,
  decoding?: (fail: (error: BodyReadError) => void, succeed: () => void) => () => void,
): void {
  const chunks: Buffer[] = [];
  let size = 0;
  let settled = false;
  const succeed = () => {
    if (settled) return;
    settled = true;
    done(undefined, chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size));
  };
  const fail = (error: BodyReadError) => {
    if (settled) return;
    settled = true;
    stop?.();
    done(error, EMPTY);
  };
  const stop = decoding?.(fail, succeed);
  output.on("data", (chunk: Buffer) => {
    if (settled) return;
    size += chunk.length;
    if (size > limit) return fail(tooLarge(limit));
    chunks.push(chunk);
  });
  output.on("end", succeed);
  req.on("close", () => {
    // With decoders, the request may close after its last byte and before they finish.
    if (!req.complete) fail(new BodyReadError(499, "aborted", "the client closed the connection before the body was complete"));
  });
}

function tooLarge(limit: number): BodyReadError {
  return new BodyReadError(413, "body_too_large", `the body is larger than ${limit} bytes`);
}
