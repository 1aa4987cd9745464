import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import express, { type Express, type NextFunction, type Request, type Response } from "express";
import { RouteTable } from "./route-table";
import { rawErrorResponse, sendError } from "./http-errors";
import { guardExpressRequest } from "./unread-body";
import { closeGracefully } from "./graceful-close";

export interface ListenerTimeouts {
  /** Time allowed to send the request headers (default 30 s); then 408 and the connection closes. */
  readonly headersTimeoutMs?: number;
  /** Time allowed to send the whole request, body included (default 60 s); then 408. */
  readonly requestTimeoutMs?: number;
  /** Idle time before a keep-alive connection is closed (default 5 s). */
  readonly keepAliveTimeoutMs?: number;
  /**
   * Time a new connection may stay silent before its first byte (default 10 s); then it is
   * closed without an answer. Later silences are covered by the timeouts above.
   */
  readonly firstByteTimeoutMs?: number;
  /**
   * Most connections open at once on this listener (default 1,000). Connections beyond it are
   * closed as soon as they are accepted, so that idle or slow clients cannot exhaust the
   * process's file descriptors.
   */
  readonly maxConnections?: number;
}

/** Raised when a listener cannot bind; the message names host and port, never a stack trace. */
export class ListenError extends Error {
  readonly code: string;
  constructor(message: string, code: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "ListenError";
    this.code = code;
  }
}

/**
 * One HTTP server per host:port. Webhook routes are served straight from an exact-path table;
 * every other request goes to the Express app, where users mount their own middleware and
 * routes. Keeping webhooks off Express's middleware chain is what makes the hot path cheap.
 */
export class Listener {
  readonly routes = new RouteTable();
  readonly express: Express;
  private server: Server | undefined;
  private boundPort: number | undefined;
  /** Open connections: when the listener closes, the answers under way on them say `Connection: close`. */
  private readonly sockets = new Set<Socket>();
  /** Tests: bind a free port instead of the requested one (see ListenerRegistry.bindFreePorts). */
  bindAnyPort = false;
  /** What this listener serves when it is not the webhooks' (the console): named when it cannot bind. */
  purpose: { readonly name: string; readonly hint: string } | undefined;
  /** Told of every request no source took (404, 405) just before it is answered: refusal logs and metrics. */
  onRefusal: ((req: IncomingMessage, res: ServerResponse, path: string) => void) | undefined;

  constructor(
    readonly host: string,
    readonly requestedPort: number,
    private readonly timeouts: ListenerTimeouts = {},
  ) {
    this.express = express();
    this.express.disable("x-powered-by");
  }

  /** The bound port once listening; the requested one before. */
  get port(): number {
    return this.boundPort ?? this.requestedPort;
  }

  get listening(): boolean {
    return this.server?.listening === true;
  }

  /** Base URL, e.g. "http://127.0.0.1:8080". */
  get origin(): string {
    const host = this.host.includes(":") ? `[${this.host}]` : this.host;
    return `http://${host}:${this.port}`;
  }

  async listen(): Promise<void> {
    if (this.server) return;
    // Added last so that routes users mounted before start() come first.
    this.express.use((req: Request, res: Response) => {
      this.onRefusal?.(req, res, req.path);
      notFound(req, res);
    });
    this.express.use(expressErrorHandler);
    const routes = this.routes;
    const app = this.express;
    const headersTimeout = this.timeouts.headersTimeoutMs ?? 30_000;
    const requestTimeout = this.timeouts.requestTimeoutMs ?? 60_000;
    // `expectsContinue`: the client sent "Expect: 100-continue" and waits before sending the body.
    const onRequest = (req: IncomingMessage, res: ServerResponse, expectsContinue: boolean): void => {
      // Node's parser takes a request line without a version as HTTP/0.9: malformed for us.
      if (req.httpVersionMajor !== 1) {
        this.onRefusal?.(req, res, "");
        sendError(res, 400, "bad_request", "malformed HTTP request", { connection: "close" });
        return;
      }
      // Node frames "gzip, chunked" by its last coding and hands over the body still gzip-coded
      // (RFC 9112 §6.1: a transfer coding the server does not understand is a 501).
      const transferEncoding = req.headers["transfer-encoding"];
      if (transferEncoding !== undefined && transferEncoding.toLowerCase() !== "chunked") {
        this.onRefusal?.(req, res, "");
        sendError(res, 501, "unsupported_transfer_encoding", "only the chunked transfer coding is supported", { connection: "close" });
        return;
      }
      let url = req.url ?? "/";
      if (url.charCodeAt(0) !== 47 /* "/" */) {
        // Absolute form ("POST http://host/hook HTTP/1.1"), which servers must accept (RFC 9112 §3.2.2).
        const origin = ABSOLUTE_FORM.exec(url);
        if (origin !== null) {
          const rest = url.slice(origin[0].length);
          req.url = url = rest.charCodeAt(0) === 47 ? rest : `/${rest}`;
        }
      }
      const queryStart = url.indexOf("?");
      const path = queryStart === -1 ? url : url.slice(0, queryStart);
      const route = routes.match(path);
      if (route === undefined) {
        // "100 Continue" goes out only if a route starts reading the body (see guardExpressRequest).
        guardExpressRequest(req, res, expectsContinue);
        app(req, res);
        return;
      }
      const handler = route.handlers.get(req.method ?? "") ?? (req.method === "HEAD" ? route.handlers.get("GET") : undefined);
      // The handler sends "100 Continue" itself, once it decides to read the body.
      if (handler !== undefined) handler.handle(req, res, path, queryStart);
      else {
        this.onRefusal?.(req, res, path);
        sendError(res, 405, "method_not_allowed", `${req.method} is not allowed on ${route.path}`, { allow: route.allow });
      }
    };
    const firstByteTimeout = this.timeouts.firstByteTimeoutMs ?? 10_000;
    const server = createServer(
      {
        headersTimeout,
        requestTimeout,
        keepAliveTimeout: this.timeouts.keepAliveTimeoutMs ?? 5_000,
        // Node checks the two timeouts above on this period; keep it below the shortest one.
        connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor(Math.min(headersTimeout, requestTimeout) / 4))),
      },
      (req, res) => onRequest(req, res, false),
    );
    // Without this listener Node answers "100 Continue" at once, before anything could refuse the request.
    server.on("checkContinue", (req: IncomingMessage, res: ServerResponse) => onRequest(req, res, true));
    // Without this one Node answers any other expectation with a bare 417 and drains the body, however large.
    server.on("checkExpectation", (req: IncomingMessage, res: ServerResponse) => {
      this.onRefusal?.(req, res, (req.url ?? "").split("?", 1)[0]);
      sendError(res, 417, "expectation_failed", "the only expectation supported is 100-continue");
    });
    server.on("clientError", onClientError);
    server.on("connect", onConnectMethod);
    server.maxConnections = this.timeouts.maxConnections ?? 1_000;
    // Node's headers timeout starts at the first byte: a connection that sends none needs its own.
    server.on("connection", (socket: Socket) => {
      // The timer goes with the socket: left pending, it held every closed connection (about
      // 2 KiB each) for the whole wait, so a client opening and closing connections fast piled
      // up memory no connection limit counted.
      const silent = setTimeout(closeIfSilent, firstByteTimeout, socket);
      silent.unref();
      this.sockets.add(socket);
      socket.once("close", () => {
        clearTimeout(silent);
        this.sockets.delete(socket);
      });
    });
    await new Promise<void>((resolve, reject) => {
      const onError = (error: NodeJS.ErrnoException) => {
        server.off("listening", onListening);
        reject(listenError(error, this.host, this.requestedPort));
      };
      const onListening = () => {
        server.off("error", onError);
        resolve();
      };
      server.once("error", onError);
      server.once("listening", onListening);
      server.listen(this.bindAnyPort ? 0 : this.requestedPort, this.host);
    });
    const address = server.address();
    this.boundPort = typeof address === "object" && address !== null ? address.port : this.requestedPort;
    this.server = server;
  }

  /**
   * Stops accepting connections, lets requests in flight finish, closes idle keep-alive
   * connections, and after `timeoutMs` cuts whatever is left (graceful-close.ts).
   */
  async close(timeoutMs: number): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    await closeGracefully(server, this.sockets, timeoutMs);
  }
}

const ABSOLUTE_FORM = /^https?:\/\/[^/?#]*(?=[/?]|$)/i;

function notFound(req: Request, res: Response): void {
  sendError(res, 404, "not_found", `no webhook or route at ${req.path}`);
}

function expressErrorHandler(error: unknown, _req: Request, res: Response, _next: NextFunction): void {
  const status = typeof (error as { status?: unknown }).status === "number" ? (error as { status: number }).status : 500;
  const expose = status < 500;
  sendError(res, status, expose ? "bad_request" : "internal_error", expose ? String((error as Error).message) : "internal server error");
}

function closeIfSilent(socket: Socket): void {
  if (socket.bytesRead === 0) socket.destroy();
}

/** This server is no proxy: CONNECT gets a 405 in the usual shape, and the connection closes. */
function onConnectMethod(_req: IncomingMessage, socket: Socket): void {
  socket.on("error", () => undefined);
  socket.end(rawErrorResponse(405, "Method Not Allowed", "method_not_allowed", "CONNECT is not supported: this server is not a proxy"));
}

const answeredClientError = new WeakSet<Socket>();

/**
 * Answers what Node's parser refused, in the same JSON shape, then closes. Requests received
 * whole before the bad bytes keep their answers, in order: the error answer waits for them.
 */
function onClientError(error: NodeJS.ErrnoException, socket: Socket): void {
  if (answeredClientError.has(socket)) return; // the parser reports its error again for each later chunk
  answeredClientError.add(socket);
  answerClientError(error, socket);
}

function answerClientError(error: NodeJS.ErrnoException, socket: Socket): void {
  const inProgress = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage ?? undefined;
  if (inProgress !== undefined && socket.writable && !inProgress.writableFinished && inProgress.req.complete) {
    // An answer is due to an earlier, complete request: send it (and any queued behind it) first.
    let waited = false;
    const next = () => {
      if (waited) return;
      waited = true;
      setImmediate(answerClientError, error, socket);
    };
    inProgress.once("finish", next);
    inProgress.once("close", next);
    return;
  }
  if (!socket.writable || inProgress?.headersSent) {
    socket.destroy();
    return;
  }
  let response: string;
  switch (error.code) {
    case "ERR_HTTP_REQUEST_TIMEOUT":
      response = rawErrorResponse(408, "Request Timeout", "request_timeout", "the request was not received in time");
      break;
    case "HPE_HEADER_OVERFLOW":
      response = rawErrorResponse(431, "Request Header Fields Too Large", "headers_too_large", "request headers are too large");
      break;
    case "ECONNRESET":
      socket.destroy();
      return;
    default:
      response = rawErrorResponse(400, "Bad Request", "bad_request", "malformed HTTP request");
  }
  socket.end(response);
}

function listenError(error: NodeJS.ErrnoException, host: string, port: number): ListenError {
  const where = `${host}:${port}`;
  switch (error.code) {
    case "EADDRINUSE":
      return new ListenError(`cannot listen on ${where}: the address is already in use`, error.code, { cause: error });
    case "EACCES":
      return new ListenError(`cannot listen on ${where}: permission denied (ports below 1024 need privileges)`, error.code, { cause: error });
    case "EADDRNOTAVAIL":
    case "ENOTFOUND":
      return new ListenError(`cannot listen on ${where}: no such local address`, error.code, { cause: error });
    default:
      return new ListenError(`cannot listen on ${where}: ${error.message}`, error.code ?? "ELISTEN", { cause: error });
  }
}
