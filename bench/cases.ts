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
  /**
   * The framework's basic shape: the webhook task emits a small value to a second, no-op task
   * (the bare servers do the same with a second queue). Every case has it but the no-emit one.
   */
  emit: boolean;
}

export const CONNECTIONS = 50;

/** The case the goals are checked on first: the basic shape, a webhook task emitting to a second task. */
export const MAIN_CASE = "one-source";
/** The same traffic with a single task: what the emit costs, and the second goal on intake. */
export const NO_EMIT_CASE = "one-source-no-emit";

export const CASES: readonly BenchCase[] = [
  {
    id: MAIN_CASE,
    title: "1 source, 312 B JSON, keep-alive, task emits to a second task (main)",
    measures: "the per-request cost of the hot path in the framework's basic shape: read, parse, event, queue, 202; the task's emitted value queued for a second task",
    sources: 1,
    bodyBytes: SMALL_BODY_BYTES,
    keepAlive: true,
    connections: CONNECTIONS,
    emit: true,
  },
  {
    id: NO_EMIT_CASE,
    title: "1 source, 312 B JSON, keep-alive, one task (no emit)",
    measures: "the hot path with a single no-op task: read, parse, event, queue, 202",
    sources: 1,
    bodyBytes: SMALL_BODY_BYTES,
    keepAlive: true,
    connections: CONNECTIONS,
    emit: false,
  },
  {
    id: "ten-sources",
    title: "10 sources on one port, 312 B, keep-alive, emit",
    measures: "routing cost: requests spread over ten paths of one listener",
    sources: 10,
    bodyBytes: SMALL_BODY_BYTES,
    keepAlive: true,
    connections: CONNECTIONS,
    emit: true,
  },
  {
    id: "body-64k",
    title: "1 source, 64 KiB JSON, keep-alive, emit",
    measures: "body handling: many chunks to read, a large parse, a large event to store",
    sources: 1,
    bodyBytes: LARGE_BODY_BYTES,
    keepAlive: true,
    connections: CONNECTIONS,
    emit: true,
  },
  {
    id: "connection-close",
    title: "1 source, 312 B, Connection: close, emit",
    measures: "connection setup and teardown per request (senders without keep-alive)",
    sources: 1,
    bodyBytes: SMALL_BODY_BYTES,
    keepAlive: false,
    connections: CONNECTIONS,
    emit: true,
  },
];

export function pathsFor(sources: number): string[] {
  return Array.from({ length: sources }, (_, i) => `/hooks/${i}`);
}
