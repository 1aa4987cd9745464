import { connect, type Socket } from "node:net";

export interface RawResponse {
  readonly status: number;
  readonly reason: string;
  /** Names in lower case; repeated headers joined with ", ". */
  readonly headers: Record<string, string>;
  readonly body: Buffer;
  readonly text: string;
  json<T = any>(): T;
}

/**
 * A raw TCP client for requests real clients will not send: malformed, slow, chunked by hand,
 * pipelined. Responses are parsed from the byte stream in order.
 */
export class RawClient {
  private buffer = Buffer.alloc(0);
  private closedFlag = false;
  private readonly closedPromise: Promise<void>;
  private wake: (() => void) | undefined;

  /** Local port of the connection (kept after it closes). */
  readonly localPort: number;

  private constructor(readonly socket: Socket) {
    this.localPort = socket.localPort!;
    socket.on("data", (chunk: Buffer) => {
      this.buffer = Buffer.concat([this.buffer, chunk]);
      this.wake?.();
    });
    socket.on("error", () => undefined);
    this.closedPromise = new Promise((resolve) =>
      socket.on("close", () => {
        this.closedFlag = true;
        this.wake?.();
        resolve();
      }),
    );
    // The server ending its side is enough to count as closed for our purposes.
    socket.on("end", () => {
      this.closedFlag = true;
      this.wake?.();
    });
  }

  static connect(port: number, host = "127.0.0.1"): Promise<RawClient> {
    return new Promise((resolve, reject) => {
      const socket = connect({ port, host });
      socket.once("error", reject);
      socket.once("connect", () => {
        socket.off("error", reject);
        resolve(new RawClient(socket));
      });
    });
  }

  get closed(): boolean {
    return this.closedFlag;
  }

  write(data: string | Buffer): Promise<void> {
    return new Promise((resolve, reject) => this.socket.write(data, (error) => (error ? reject(error) : resolve())));
  }

  /** Waits for the next complete response on the connection and consumes it. */
  async readResponse(timeoutMs = 3_000, options: { head?: boolean } = {}): Promise<RawResponse> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const parsed = parseResponse(this.buffer, this.closedFlag, options.head === true);
      if (parsed !== undefined) {
        this.buffer = this.buffer.subarray(parsed.consumed);
        return parsed.response;
      }
      if (this.closedFlag) throw new Error(`connection closed before a complete response; got ${JSON.stringify(this.buffer.toString("latin1"))}`);
      await this.until(deadline, `a response within ${timeoutMs} ms; got ${JSON.stringify(this.buffer.toString("latin1"))}`);
    }
  }

  /** Resolves true when the server closes the connection within `timeoutMs`, false otherwise. */
  async waitClosed(timeoutMs = 3_000): Promise<boolean> {
    const timer = new Promise<boolean>((resolve) => setTimeout(() => resolve(false), timeoutMs).unref());
    if (this.closedFlag) return true;
    return Promise.race([this.closedPromise.then(() => true), new Promise<boolean>((resolve) => this.socket.once("end", () => resolve(true))), timer]);
  }

  /** Bytes received and not consumed by readResponse. */
  get pending(): Buffer {
    return this.buffer;
  }

  destroy(): void {
    this.socket.destroy();
  }

  private until(deadline: number, what: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.wake = undefined;
        reject(new Error(`timed out waiting for ${what}`));
      }, Math.max(0, deadline - Date.now()));
      this.wake = () => {
        clearTimeout(timer);
        this.wake = undefined;
        resolve();
      };
    });
  }
}

/** One request over a fresh connection: writes `data` (pieces separated by pauses), reads one response. */
export async function rawRequest(
  port: number,
  data: string | Buffer | Array<string | Buffer | number>,
  timeoutMs = 3_000,
  options: { head?: boolean } = {},
): Promise<RawResponse> {
  const client = await RawClient.connect(port);
  try {
    for (const piece of Array.isArray(data) ? data : [data]) {
      if (typeof piece === "number") await new Promise((resolve) => setTimeout(resolve, piece));
      else await client.write(piece);
    }
    return await client.readResponse(timeoutMs, options);
  } finally {
    client.destroy();
  }
}

/** A request's bytes: request line, headers (Host and Content-Length added when missing), blank line, body. */
export function httpRequest(method: string, target: string, headers: Record<string, string | number> = {}, body?: string | Buffer): Buffer {
  const lines = [`${method} ${target} HTTP/1.1`];
  if (!Object.keys(headers).some((h) => h.toLowerCase() === "host")) lines.push("Host: localhost");
  const names = Object.keys(headers).map((h) => h.toLowerCase());
  if (body !== undefined && !names.includes("content-length") && !names.includes("transfer-encoding")) {
    lines.push(`Content-Length: ${Buffer.byteLength(body)}`);
  }
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  const head = Buffer.from(`${lines.join("\r\n")}\r\n\r\n`, "latin1");
  return body === undefined ? head : Buffer.concat([head, typeof body === "string" ? Buffer.from(body, "utf8") : body]);
}

/** Encodes pieces as a chunked body, terminating chunk included. */
export function chunked(...pieces: Array<string | Buffer>): Buffer {
  const parts: Buffer[] = [];
  for (const piece of pieces) {
    const bytes = typeof piece === "string" ? Buffer.from(piece, "utf8") : piece;
    if (bytes.length === 0) continue;
    parts.push(Buffer.from(`${bytes.length.toString(16)}\r\n`, "latin1"), bytes, Buffer.from("\r\n", "latin1"));
  }
  parts.push(Buffer.from("0\r\n\r\n", "latin1"));
  return Buffer.concat(parts);
}

function parseResponse(buffer: Buffer, closed: boolean, head: boolean): { response: RawResponse; consumed: number } | undefined {
  const headEnd = buffer.indexOf("\r\n\r\n");
  if (headEnd === -1) return undefined;
  const [statusLine, ...headerLines] = buffer.subarray(0, headEnd).toString("latin1").split("\r\n");
  const match = /^HTTP\/1\.[01] (\d{3}) ?(.*)$/.exec(statusLine);
  if (!match) throw new Error(`not an HTTP response: ${JSON.stringify(statusLine)}`);
  const status = Number(match[1]);
  const headers: Record<string, string> = {};
  for (const line of headerLines) {
    const colon = line.indexOf(":");
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    headers[name] = name in headers ? `${headers[name]}, ${value}` : value;
  }
  let offset = headEnd + 4;
  let body: Buffer;
  if (head || status < 200 || status === 204 || status === 304) {
    body = Buffer.alloc(0);
  } else if (headers["transfer-encoding"]?.toLowerCase().includes("chunked")) {
    const parts: Buffer[] = [];
    for (;;) {
      const lineEnd = buffer.indexOf("\r\n", offset);
      if (lineEnd === -1) return undefined;
      const size = parseInt(buffer.subarray(offset, lineEnd).toString("latin1"), 16);
      if (buffer.length < lineEnd + 2 + size + 2) return undefined;
      parts.push(buffer.subarray(lineEnd + 2, lineEnd + 2 + size));
      offset = lineEnd + 2 + size + 2;
      if (size === 0) break;
    }
    body = Buffer.concat(parts);
  } else if (headers["content-length"] !== undefined) {
    const length = Number(headers["content-length"]);
    if (buffer.length < offset + length) return undefined;
    body = buffer.subarray(offset, offset + length);
    offset += length;
  } else {
    if (!closed) return undefined;
    body = buffer.subarray(offset);
    offset = buffer.length;
  }
  const copy = Buffer.from(body);
  const text = copy.toString("utf8");
  return {
    response: { status, reason: match[2], headers, body: copy, text, json: () => JSON.parse(text) },
    consumed: offset,
  };
}
