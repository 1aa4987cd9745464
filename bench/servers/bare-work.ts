import { randomUUID } from "node:crypto";
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http";
import { parse as parseQueryString } from "node:querystring";

/**
 * The work every bare server does per request, the same work the framework does: read the
 * body once, parse the JSON, build the event (the seed's fields), queue it for a task, answer
 * 202 with the event id.
 */
export interface BareEvent {
  body: unknown;
  headers: IncomingHttpHeaders;
  query: Record<string, string | string[] | undefined>;
  method: string;
  path: string;
  client: [string, number];
  received_at: number;
}

/** Reads the whole body, then calls back once with it. */
export function readBody(req: IncomingMessage, done: (raw: Buffer) => void): void {
  const chunks: Buffer[] = [];
  req.on("data", (chunk: Buffer) => chunks.push(chunk));
  req.on("end", () => done(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
}

export function buildEvent(req: IncomingMessage, raw: Buffer, path: string, queryStart: number, receivedAt: number): BareEvent {
  return {
    body: JSON.parse(raw.toString("utf8")),
    headers: req.headers,
    query: queryStart === -1 ? {} : parseQueryString(req.url!.slice(queryStart + 1)),
    method: req.method!,
    path,
    client: [req.socket.remoteAddress ?? "", req.socket.remotePort ?? 0],
    received_at: receivedAt / 1000,
  };
}

/** The framework's default answer, byte for byte, so both sides send the same response. */
export function answerAccepted(res: ServerResponse): void {
  const body = `{"accepted":true,"id":"${randomUUID()}"}`;
  res.writeHead(202, { "content-type": "application/json", "content-length": body.length });
  res.end(body);
}

export function answerNotFound(res: ServerResponse): void {
  const body = `{"error":"not_found"}`;
  res.writeHead(404, { "content-type": "application/json", "content-length": body.length });
  res.end(body);
}
