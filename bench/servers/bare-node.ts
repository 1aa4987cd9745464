import type { BareEvent } from "./bare-work";
import { eventQueue } from "./bare-queue";
import { serveBare } from "./bare-http";
import { readConfig } from "./server-config";

/** The baseline: `node:http` alone doing the same work, routes in an exact-path table. */
const config = readConfig();
const queue = eventQueue<BareEvent>(config);

serveBare(config, (event) => queue.push(event));
