/**
 * CPU per request of the memory store's history alone, without HTTP, queues or tasks: the
 * main case's notes (two events, two runs a request) fed at RATE requests a second for
 * SECONDS, with the memory store's default bounds. Run:
 * `npm run build && node dist/bench/history-cpu-memory.js` (RATE, SECONDS).
 */
import { MemoryHistory } from "../src/store/memory/memory-history";
import { measureHistoryCpu } from "./history-cpu";

void measureHistoryCpu(new MemoryHistory(), Number(process.env.RATE ?? 25_000), Number(process.env.SECONDS ?? 6));
