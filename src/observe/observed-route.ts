import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { performance } from "node:perf_hooks";
import { clientAddress } from "../http/forwarded";
import { responseCodeOf } from "../http/response-code";
import type { RouteHandler } from "../http/route-table";
import type { TrustFunction } from "../http/trust-proxy";
import type { AppObserver, RefusalDetail } from "./app-observer";
import { endRequestSpan, runIn, startRequestSpan } from "./tracing";

/** What a source tells the wrapper about itself. */
export interface ObservedSource {
  /** Label of the source: its task's name. */
  readonly source: string;
  /** The source's path. */
  readonly route: string;
  readonly origin: () => string;
  readonly trust: TrustFunction | undefined;
}

/**
 * Wraps a source's route handler: times the request, runs it inside its server span, and when
 * the answer is sent reports how it ended to the observer. The handler itself is unchanged.
 */
export class ObservedRoute implements RouteHandler {
  /** The listener's origin, read at the first request (the port is bound by then): not built per request. */
  private origin: string | undefined;

  constructor(
    private readonly inner: RouteHandler,
    private readonly about: ObservedSource,
    private readonly observer: AppObserver | undefined,
    private readonly tracing: boolean,
  ) {}

  handle(req: IncomingMessage, res: ServerResponse, path: string, queryStart: number): void {
    const started = performance.now();
    const traced = this.tracing ? startRequestSpan(req, this.about.route) : undefined;
    res.on("close", () => {
      // answerOf inlined: no object per request.
      const status = res.headersSent ? res.statusCode : 499;
      const code = responseCodeOf(res) ?? (status === 499 ? "client_closed" : status < 400 ? "accepted" : "error");
      if (traced !== undefined) endRequestSpan(traced.span, status, code);
      this.observer?.onRequest?.({
        source: this.about.source,
        route: this.about.route,
        origin: (this.origin ??= this.about.origin()),
        method: req.method ?? "",
        status,
        code,
        durationSeconds: (performance.now() - started) / 1000,
        refusal: status >= 400 && status !== 499 ? refusalDetail(req, path, this.about.trust) : undefined,
      });
    });
    if (traced?.context === undefined) return this.inner.handle(req, res, path, queryStart);
    runIn(traced.context, () => this.inner.handle(req, res, path, queryStart));
  }
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Who asked and how to find the line again; computed for refusals only. */
export function refusalDetail(req: IncomingMessage, path: string, trust: TrustFunction | undefined): RefusalDetail {
  const given = req.headers["x-request-id"];
  return {
    client: clientAddress(req, trust)[0],
    requestId: typeof given === "string" && REQUEST_ID.test(given) ? given : randomUUID(),
    path: path.length > 200 ? path.slice(0, 200) : path,
  };
}

/** Status and code of a sent answer; 499 "client_closed" when the client left before it. */
export function answerOf(res: ServerResponse): { status: number; code: string } {
  const status = res.headersSent ? res.statusCode : 499;
  const code = responseCodeOf(res) ?? (status === 499 ? "client_closed" : status < 400 ? "accepted" : "error");
  return { status, code };
}

/**
 * The hook a listener calls for requests no source took (404, 405): reported with source and
 * route "", so that an unknown path never becomes a label.
 */
export function listenerRefusalHook(observer: AppObserver, origin: () => string): (req: IncomingMessage, res: ServerResponse, path: string) => void {
  return (req, res, path) => {
    const started = performance.now();
    res.on("close", () => {
      const { status, code } = answerOf(res);
      observer.onRequest?.({
        source: "",
        route: "",
        origin: origin(),
        method: req.method ?? "",
        status,
        code,
        durationSeconds: (performance.now() - started) / 1000,
        refusal: status >= 400 ? refusalDetail(req, path, undefined) : undefined,
      });
    });
  };
}
