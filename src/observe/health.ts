import type { Request, Response } from "express";

/** `health: true` or where to serve the probes. */
export interface HealthOptions {
  /** Liveness path (default "/livez"): 200 while the process serves HTTP. */
  readonly livePath?: string;
  /** Readiness path (default "/readyz"): 200 when started, the store healthy, and not shutting down; 503 otherwise. */
  readonly readyPath?: string;
}

export const DEFAULT_LIVE_PATH = "/livez";
export const DEFAULT_READY_PATH = "/readyz";

/** One check of the readiness answer. */
export interface HealthCheck {
  readonly ok: boolean;
  readonly detail?: string;
}

/** What /readyz answers, and `app.status()` reports. */
export interface Readiness {
  readonly ready: boolean;
  readonly checks: {
    /** start() finished. */
    readonly started: HealthCheck;
    /** The store writes (no `failure`). */
    readonly store: HealthCheck;
    /** No SIGTERM/SIGINT and no stop() yet. */
    readonly notShuttingDown: HealthCheck;
  };
}

export function liveHandler(_req: Request, res: Response): void {
  send(res, 200, '{"live":true}');
}

export function readyHandler(readiness: () => Readiness): (req: Request, res: Response) => void {
  return (_req, res) => {
    const report = readiness();
    send(res, report.ready ? 200 : 503, JSON.stringify(report));
  };
}

function send(res: Response, status: number, body: string): void {
  res.writeHead(status, { "content-type": "application/json", "cache-control": "no-store", "content-length": Buffer.byteLength(body) });
  res.end(body);
}
