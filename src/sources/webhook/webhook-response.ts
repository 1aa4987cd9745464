import { validateHeaderName, validateHeaderValue } from "node:http";

/** JSON-serialisable value: what a mapping response body may hold. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

export interface WebhookResponseInit {
  status_code?: number;
  /** A mapping or array is sent as JSON; a string as text/plain; a Buffer as-is. */
  body?: JsonValue | Buffer;
  headers?: Record<string, string>;
}

/**
 * A fixed HTTP answer: the source's custom response, a handshake answer, or what a task
 * returns to answer its caller. Serialised once, when constructed.
 */
export class WebhookResponse {
  readonly status_code: number;
  readonly body: JsonValue | Buffer | undefined;
  readonly headers: Readonly<Record<string, string>>;
  /** Bytes sent as the response body. */
  readonly payload: Buffer;

  constructor(init: WebhookResponseInit = {}) {
    const status = init.status_code ?? 200;
    if (!Number.isInteger(status) || status < 200 || status > 599) {
      throw new TypeError(`WebhookResponse: status_code must be an integer from 200 to 599, got ${String(init.status_code)}`);
    }
    this.status_code = status;
    this.body = init.body;
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(init.headers ?? {})) {
      if (typeof value !== "string") throw new TypeError(`WebhookResponse: header "${name}" must be a string`);
      try {
        validateHeaderName(name);
        validateHeaderValue(name, value);
      } catch {
        throw new TypeError(`WebhookResponse: header ${JSON.stringify(name)} has an invalid name or value`);
      }
      headers[name.toLowerCase()] = value;
    }
    const body = init.body;
    if (body === undefined) {
      this.payload = Buffer.alloc(0);
    } else if (Buffer.isBuffer(body)) {
      this.payload = body;
      headers["content-type"] ??= "application/octet-stream";
    } else if (typeof body === "string") {
      this.payload = Buffer.from(body, "utf8");
      headers["content-type"] ??= "text/plain; charset=utf-8";
    } else {
      this.payload = Buffer.from(JSON.stringify(body), "utf8");
      headers["content-type"] ??= "application/json";
    }
    this.headers = headers;
  }
}
