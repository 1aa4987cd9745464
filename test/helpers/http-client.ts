import { Agent, request } from "node:http";
import { connect, createServer, type Server } from "node:net";

export interface Reply {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  json<T = any>(): T;
}

/** fetch (undici), body read in full. */
export async function send(url: string, init: RequestInit = {}): Promise<Reply> {
  const response = await fetch(url, { method: "POST", ...init });
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, json: () => JSON.parse(text) };
}

/** POSTs a JSON value with fetch. */
export function postJson(url: string, value: unknown, headers: Record<string, string> = {}): Promise<Reply> {
  return send(url, { body: JSON.stringify(value), headers: { "content-type": "application/json", ...headers } });
}

export interface NodeReply {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: Buffer;
  /** Local port of the socket the request went over. */
  readonly localPort: number;
  readonly reusedSocket: boolean;
  json<T = any>(): T;
}

/** node:http request, optionally through a keep-alive Agent. */
export function nodeRequest(
  url: string,
  options: { method?: string; headers?: Record<string, string | number>; body?: string | Buffer; agent?: Agent } = {},
): Promise<NodeReply> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: options.method ?? "POST", headers: options.headers, agent: options.agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => {
        const body = Buffer.concat(chunks);
        resolve({
          status: res.statusCode!,
          headers: res.headers,
          body,
          localPort: req.socket!.localPort!,
          reusedSocket: req.reusedSocket,
          json: () => JSON.parse(body.toString("utf8")),
        });
      });
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(options.body);
  });
}

/** A port that was free a moment ago (bound and released on 127.0.0.1). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Holds host:port with a plain TCP server until closed. */
export async function holdPort(port: number, host = "127.0.0.1"): Promise<Server> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, resolve);
  });
  return server;
}

export function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

/** Resolves with the error code of a TCP connection attempt, or "connected". */
export function tryConnect(port: number, host = "127.0.0.1"): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ port, host });
    socket.once("connect", () => {
      socket.destroy();
      resolve("connected");
    });
    socket.once("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? "error"));
  });
}
