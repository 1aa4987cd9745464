import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { answerAccepted, answerNotFound, buildEvent, readBody, type BareEvent } from "./bare-work";
import { eventQueue } from "./bare-queue";
import { announce, exitOnSignal, readConfig } from "./server-config";

/** The baseline: `node:http` alone doing the same work, routes in an exact-path table. */
const config = readConfig();
const queue = eventQueue<BareEvent>(config);
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
    queue.push(buildEvent(req, raw, path, queryStart, receivedAt));
    answerAccepted(res);
  });
});

server.listen(config.port, "127.0.0.1", () => announce((server.address() as AddressInfo).port));
exitOnSignal(() => new Promise<void>((resolve) => {
  server.close(() => resolve());
  server.closeAllConnections();
}));
