import type { ServerResponse } from "node:http";
import { closeIfBodyUnread } from "./unread-body";
import { noteResponseCode } from "./response-code";

/**
 * Error answers: JSON `{"error": code, "message": text}`. The code is stable; the message is
 * for people and may change.
 */
export function sendError(
  res: ServerResponse,
  status: number,
  code: string,
  message: string,
  headers?: Readonly<Record<string, string>>,
): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  noteResponseCode(res, code);
  const body = JSON.stringify({ error: code, message });
  closeIfBodyUnread(res);
  res.writeHead(status, { ...headers, "content-type": "application/json", "content-length": Buffer.byteLength(body) });
  res.end(body);
}

/** A complete raw HTTP/1.1 error answer, for sockets the parser gave up on (no ServerResponse exists). */
export function rawErrorResponse(status: number, reason: string, code: string, message: string): string {
  const body = JSON.stringify({ error: code, message });
  return (
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`
  );
}
