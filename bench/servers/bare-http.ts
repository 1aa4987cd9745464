import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { answerAccepted, answerNotFound, buildEvent, readBody, type BareEvent } from "./bare-work";
import { announce, exitOnSignal, type ServerConfig } from "./server-config";

/**
 * The `node:http` front every bare server shares: POST on an exact path, the body read once and
 * built into an event, handed to `accept`. A plain return answers 202 at once; a promise is
 * answered 202 when it resolves (the job committed) and 503 when it rejects. Announces its
 * port; on a signal, closes the server, then `close` (the job queue's own shutdown).
 */
export function serveBare(config: ServerConfig, accept: (event: BareEvent) => void | Promise<unknown>, close: () => Promise<void> = async () => {}): void {
  const routes = new Set(config.paths);
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const receivedAt = Date.now();
    const url = req.url!;
    const queryStart = url.indexOf("?");
    const path = queryStart === -1 ? url : url.slice(0, queryStart);
    if (req.method !== "POST" || !routes.has(path)) {
      req.resume();
      return answerNotFound(res);
    }
    readBody(req, (raw) => {
      const accepted = accept(buildEvent(req, raw, path, queryStart, receivedAt));
      if (accepted === undefined) return answerAccepted(res);
      accepted.then(
        () => answerAccepted(res),
        () => void res.writeHead(503).end(),
      );
    });
  });
  server.listen(config.port, "127.0.0.1", () => announce((server.address() as AddressInfo).port));
  exitOnSignal(async () => {
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
    await close();
  });
}
