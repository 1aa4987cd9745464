import { LARGE_BODY_BYTES, SMALL_BODY_BYTES } from "./payload";

/** One traffic shape, sent in turn to every server. */
export interface BenchCase {
  id: string;
  title: string;
  /** What the case isolates, for the report. */
  measures: string;
  /** Sources (paths) on the one port; requests cycle through them. */
  sources: number;
  bodyBytes: number;
  keepAlive: boolean;
  connections: number;
}

export const CONNECTIONS = 50;

export const CASES: readonly BenchCase[] = [
  {
    id: "one-source",
    title: "1 source, 312 B JSON, keep-alive",
    measures: "the per-request cost of the hot path: read, parse, event, queue, 202",
    sources: 1,
    bodyBytes: SMALL_BODY_BYTES,
    keepAlive: true,
    connections: CONNECTIONS,
  },
  {
    id: "ten-sources",
    title: "10 sources on one port, 312 B, keep-alive",
    measures: "routing cost: requests spread over ten paths of one listener",
    sources: 10,
    bodyBytes: SMALL_BODY_BYTES,
    keepAlive: true,
    connections: CONNECTIONS,
  },
  {
    id: "body-64k",
    title: "1 source, 64 KiB JSON, keep-alive",
    measures: "body handling: many chunks to read, a large parse, a large event to store",
    sources: 1,
    bodyBytes: LARGE_BODY_BYTES,
    keepAlive: true,
    connections: CONNECTIONS,
  },
  {
    id: "connection-close",
    title: "1 source, 312 B, Connection: close",
    measures: "connection setup and teardown per request (senders without keep-alive)",
    sources: 1,
    bodyBytes: SMALL_BODY_BYTES,
    keepAlive: false,
    connections: CONNECTIONS,
  },
];

export function pathsFor(sources: number): string[] {
  return Array.from({ length: sources }, (_, i) => `/hooks/${i}`);
}
