import { request as httpRequest, type IncomingMessage, type OutgoingHttpHeaders } from "node:http";
import { request as httpsRequest } from "node:https";
import type { Duplex } from "node:stream";
import { brotliDecompressSync, gunzipSync, inflateRawSync, inflateSync } from "node:zlib";

/** What `send` prints of an answer. */
export interface SentAnswer {
  readonly status: number;
  readonly statusText: string;
  /** Lower-case names, sorted; repeated headers joined with ", " except set-cookie, one line each. */
  readonly headers: ReadonlyArray<readonly [string, string]>;
  readonly body: string;
}

/** The request got no answer: `reason` is the system's code (ECONNREFUSED) or a short phrase. */
export class SendFailure extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = "SendFailure";
  }
}

/** Headers every request carries unless `--header` gives its own (a browser's sec-fetch-* are not among them). */
const DEFAULT_HEADERS: Readonly<Record<string, string>> = { accept: "*/*", "user-agent": "node", "accept-encoding": "gzip, deflate" };
const CONNECT_TIMEOUT_MS = 10_000;
const IDLE_TIMEOUT_MS = 300_000;

/**
 * One HTTP(S) request, no redirect followed. node:http rather than fetch(), which refuses the
 * ports browsers block (6000, 6665-6669, 10080, ...) although an app may well listen there.
 * Timeouts as fetch had them: 10 s to connect, 300 s without a byte of the answer.
 * Throws SendFailure when nothing answered; an invalid method or header throws as node does.
 */
export function sendHttp(url: URL, method: string, headers: Readonly<Record<string, string>>, body: Buffer): Promise<SentAnswer> {
  const request = url.protocol === "https:" ? httpsRequest : httpRequest;
  const outgoing: OutgoingHttpHeaders = { ...DEFAULT_HEADERS, ...headers };
  if (body.length > 0) outgoing["content-length"] = String(body.length);
  // No keep-alive agent: one request, and the process ends right after it.
  const req = request(url, { method, headers: outgoing, agent: false });
  return new Promise<SentAnswer>((resolve, reject) => {
    const fail = (reason: string) => {
      reject(new SendFailure(reason));
      req.destroy();
    };
    const connecting = setTimeout(() => fail(`no connection within ${CONNECT_TIMEOUT_MS / 1000}s`), CONNECT_TIMEOUT_MS);
    req.on("socket", (socket) => socket.once(url.protocol === "https:" ? "secureConnect" : "connect", () => clearTimeout(connecting)));
    req.setTimeout(IDLE_TIMEOUT_MS, () => fail(`no answer within ${IDLE_TIMEOUT_MS / 1000}s`));
    req.on("error", (error: NodeJS.ErrnoException) => {
      clearTimeout(connecting);
      fail(error.code ?? error.message);
    });
    // node hands a 101 or a CONNECT's answer to these events, not to "response": unheard, the
    // promise would never settle and the process would end printing nothing, with code 0. The
    // answer is printed without what follows it (no longer HTTP).
    const switched = (res: IncomingMessage, socket: Duplex) => {
      clearTimeout(connecting);
      socket.destroy();
      resolve({ status: res.statusCode ?? 0, statusText: res.statusMessage ?? "", headers: headersOf(res), body: "" });
    };
    req.on("upgrade", switched);
    req.on("connect", switched);
    req.on("response", (res) => {
      clearTimeout(connecting);
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("error", (error: NodeJS.ErrnoException) => fail(error.code ?? error.message));
      res.on("end", () => {
        try {
          resolve({ status: res.statusCode ?? 0, statusText: res.statusMessage ?? "", headers: headersOf(res), body: new TextDecoder().decode(decoded(res, Buffer.concat(chunks))) });
        } catch (error) {
          fail(`the answer's body does not decode (${res.headers["content-encoding"]}): ${(error as Error).message}`);
        }
      });
    });
    req.end(body.length > 0 ? body : undefined);
  });
}

/** As fetch's Headers iterate: sorted names, values joined, each set-cookie on its own. */
function headersOf(res: IncomingMessage): Array<[string, string]> {
  const joined = new Map<string, string[]>();
  for (let i = 0; i < res.rawHeaders.length; i += 2) {
    const name = res.rawHeaders[i].toLowerCase();
    joined.set(name, [...(joined.get(name) ?? []), res.rawHeaders[i + 1]]);
  }
  return [...joined.keys()].sort().flatMap((name): Array<[string, string]> => {
    const values = joined.get(name)!;
    return name === "set-cookie" ? values.map((v) => [name, v]) : [[name, values.join(", ")]];
  });
}

/** The body as fetch gave it: decompressed for the encodings it accepts. */
function decoded(res: IncomingMessage, raw: Buffer): Buffer {
  if (raw.length === 0) return raw;
  const encodings = String(res.headers["content-encoding"] ?? "").toLowerCase().split(",").map((e) => e.trim()).filter((e) => e !== "" && e !== "identity");
  return encodings.reverse().reduce((body, encoding) => {
    if (encoding === "gzip" || encoding === "x-gzip") return gunzipSync(body);
    // "deflate" is zlib-wrapped by the standard, raw by some servers.
    if (encoding === "deflate") return (body[0] & 0x0f) === 8 ? inflateSync(body) : inflateRawSync(body);
    if (encoding === "br") return brotliDecompressSync(body);
    return body;
  }, raw);
}
