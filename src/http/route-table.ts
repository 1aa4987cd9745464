import type { IncomingMessage, ServerResponse } from "node:http";

/**
 * Handles one request on a matched route. `queryStart` is the index of "?" in req.url, or -1.
 * A client that sent `Expect: 100-continue` waits for the handler: call `continueIfExpected`
 * just before reading the body, so that a refusal (401, 413, 503) costs no upload.
 */
export interface RouteHandler {
  handle(req: IncomingMessage, res: ServerResponse, path: string, queryStart: number): void;
}

const CONTINUE = /(?:^|\W)100-continue(?:$|\W)/i;

/** Sends "100 Continue" when the client waits for it (Node's own test for the header). */
export function continueIfExpected(req: IncomingMessage, res: ServerResponse): void {
  const expect = req.headers.expect;
  if (req.httpVersionMinor === 1 && typeof expect === "string" && CONTINUE.test(expect) && !res.headersSent) res.writeContinue();
}

export interface Route {
  readonly path: string;
  readonly handlers: ReadonlyMap<string, RouteHandler>;
  /** Value of the Allow header for 405 answers. A GET handler also answers HEAD (see the listener). */
  readonly allow: string;
}

interface MutableRoute {
  path: string;
  handlers: Map<string, RouteHandler>;
  owners: Map<string, string>;
  allow: string;
}

/**
 * Exact-path routing for webhook sources: one Map lookup per request, no regular expressions.
 * A trailing slash is ignored ("/hooks/" matches "/hooks").
 */
export class RouteTable {
  private readonly routes = new Map<string, MutableRoute>();

  get size(): number {
    return this.routes.size;
  }

  /** Adds `methods` on `path`; throws naming both owners when one is taken already. */
  add(path: string, methods: readonly string[], handler: RouteHandler, owner: string): void {
    const key = normalizePath(path);
    let route = this.routes.get(key);
    if (!route) this.routes.set(key, (route = { path: key, handlers: new Map(), owners: new Map(), allow: "" }));
    for (const method of methods) {
      const taken = route.owners.get(method);
      if (taken !== undefined) {
        throw new Error(`route conflict: ${method} ${key} is claimed by both ${taken} and ${owner}`);
      }
    }
    for (const method of methods) {
      route.handlers.set(method, handler);
      route.owners.set(method, owner);
    }
    route.allow = allowHeader(route.handlers);
  }

  remove(path: string, owner: string): void {
    const key = normalizePath(path);
    const route = this.routes.get(key);
    if (!route) return;
    for (const [method, o] of route.owners) {
      if (o !== owner) continue;
      route.owners.delete(method);
      route.handlers.delete(method);
    }
    if (route.handlers.size === 0) this.routes.delete(key);
    else route.allow = allowHeader(route.handlers);
  }

  /** Every routed path (to check that another router's paths do not collide with them). */
  paths(): string[] {
    return [...this.routes.keys()];
  }

  match(path: string): Route | undefined {
    const route = this.routes.get(path);
    if (route !== undefined || path.length <= 1 || path.charCodeAt(path.length - 1) !== 47 /* "/" */) return route;
    return this.routes.get(path.slice(0, -1));
  }
}

/** The route's methods; HEAD is answered wherever GET is (as GET, without a body), so it is listed. */
function allowHeader(handlers: ReadonlyMap<string, RouteHandler>): string {
  const methods = [...handlers.keys()];
  const get = methods.indexOf("GET");
  if (get !== -1 && !handlers.has("HEAD")) methods.splice(get + 1, 0, "HEAD");
  return methods.join(", ");
}

export function normalizePath(path: string): string {
  return path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path;
}
