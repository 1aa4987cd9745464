import express, { type Request, type Response } from "express";
import type { AddressInfo } from "node:net";
import { answerAccepted, buildEvent, readBody, type BareEvent } from "./bare-work";
import { eventQueue } from "./bare-queue";
import { announce, exitOnSignal, readConfig } from "./server-config";

/** Express 5 with one route per path, the body read by hand (no body-parser), same work. */
const config = readConfig();
const queue = eventQueue<BareEvent>(config);
const app = express();

for (const path of config.paths) {
  app.post(path, (req: Request, res: Response) => {
    const receivedAt = Date.now();
    readBody(req, (raw) => {
      const event = buildEvent(req, raw, req.path, -1, receivedAt);
      event.query = req.query as BareEvent["query"];
      queue.push(event);
      answerAccepted(res);
    });
  });
}

const server = app.listen(config.port, "127.0.0.1", () => announce((server.address() as AddressInfo).port));
exitOnSignal(() => new Promise<void>((resolve) => {
  server.close(() => resolve());
  server.closeAllConnections();
}));
