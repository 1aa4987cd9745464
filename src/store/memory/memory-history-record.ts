import type { DeliveryNote, EventNote, EventOrigin, RunNote } from "../history";
import { exactForm } from "../payload-codec";
import { parseBody } from "../../sources/webhook/parse-body";
import { valueBytes } from "./heap-bytes";

/**
 * One event as the memory history keeps it: the note's fields, its runs and its links in one
 * object. Thousands are held at once and all of them outlive the young generation, so each
 * object kept per event costs twice in the garbage collector (copied, then promoted): the
 * record holds what a note, a wrapper, a runs entry and two link sets held before.
 */
export class KeptEvent {
  readonly id: string;
  readonly origin: EventOrigin;
  readonly name: string | undefined;
  readonly receivedAt: number;
  /** The one delivery of most events as it is; an array only for several (or none). */
  private readonly delivery: DeliveryNote | readonly DeliveryNote[];
  /** A copy made when noted; without its body when `fromRaw` (the raw bytes give it back when read). */
  private readonly payload: unknown;
  /**
   * The request's bytes, one character a byte: a string is one object the collector copies
   * and never looks into, where a Buffer kept is three (and memory outside the heap it
   * tracks and sweeps apart). A copy too, so no one holding the message's Buffer changes it.
   */
  private readonly rawText: string | undefined;
  readonly fromRaw: boolean;
  readonly parentId: string | undefined;
  readonly replayOf: string | undefined;
  readonly traceId: string | undefined;
  /** Its runs in the order noted: the first alone (most events run once), an array from the second on. */
  private runs: RunNote | RunNote[] | undefined = undefined;
  /** Ids of the events its runs emitted and of its replays, in the order noted: an id alone, or an array from the second on. */
  private children: string | string[] | undefined = undefined;
  private replays: string | string[] | undefined = undefined;
  /** About what it takes in memory: its raw bytes, its payload, its runs' errors, some overhead. */
  bytes: number;

  constructor(note: EventNote) {
    this.id = note.id;
    this.origin = note.origin;
    this.name = note.name;
    this.receivedAt = note.receivedAt;
    this.delivery = note.deliveries.length === 1 ? note.deliveries[0] : note.deliveries;
    this.rawText = note.raw?.toString("latin1");
    // Kept now: the task that receives the same object may change it before anyone reads it.
    // A body the raw bytes give back is not kept: it is parsed from them again when read.
    const rest = note.bodyFromRaw === true && this.rawText !== undefined ? withoutBody(note.payload) : undefined;
    this.fromRaw = rest !== undefined;
    this.payload = snapshot(rest ?? note.payload);
    this.parentId = note.parentId;
    this.replayOf = note.replayOf;
    this.traceId = note.traceId;
    this.bytes = EVENT_BYTES + (this.rawText?.length ?? 0) + valueBytes(this.payload, 0) + note.deliveries.length * DELIVERY_BYTES;
  }

  /** A new Buffer at each call: what the caller does to it stays with the caller. */
  get raw(): Buffer | undefined {
    return this.rawText === undefined ? undefined : Buffer.from(this.rawText, "latin1");
  }

  get deliveries(): readonly DeliveryNote[] {
    const { delivery } = this;
    return isList(delivery) ? delivery : [delivery];
  }

  /** The payload as noted: a body left out is parsed again from the raw bytes, as it arrived. */
  payloadNow(): unknown {
    const raw = this.fromRaw ? this.raw : undefined;
    if (raw === undefined) return this.payload;
    const rest = this.payload as Record<string, unknown>;
    const headers = rest.headers as Record<string, unknown> | undefined;
    const contentType = typeof headers?.["content-type"] === "string" ? (headers["content-type"] as string) : undefined;
    let body: unknown;
    try {
      body = parseBody("auto", raw, contentType);
    } catch {
      body = null; // it parsed when it came in: only a changed parser could fail here
    }
    return { body, ...rest };
  }

  runList(): readonly RunNote[] {
    const { runs } = this;
    return runs === undefined ? [] : Array.isArray(runs) ? runs : [runs];
  }

  addRun(run: RunNote): void {
    this.bytes += runBytes(run);
    const { runs } = this;
    if (runs === undefined) this.runs = run;
    else if (Array.isArray(runs)) runs.push(run);
    else this.runs = [runs, run];
  }

  /** Runs noted before the event itself. */
  adoptRuns(runs: RunNote[]): void {
    this.runs = runs;
    this.bytes += runsBytes(runs);
  }

  links(kind: LinkKind): readonly string[] {
    const ids = this[kind];
    return ids === undefined ? [] : typeof ids === "string" ? [ids] : ids;
  }

  /** Links noted before the event itself. */
  adoptLinks(kind: LinkKind, ids: string[]): void {
    this[kind] = ids;
  }

  link(kind: LinkKind, id: string): void {
    const ids = this[kind];
    if (ids === undefined) this[kind] = id;
    else if (typeof ids === "string") this[kind] = [ids, id];
    else ids.push(id);
  }

  unlink(kind: LinkKind, id: string): void {
    const ids = this[kind];
    if (ids === id) this[kind] = undefined;
    else if (Array.isArray(ids)) {
      const at = ids.indexOf(id);
      if (at >= 0) ids.splice(at, 1);
    }
  }

}

export type LinkKind = "children" | "replays";

function isList(delivery: DeliveryNote | readonly DeliveryNote[]): delivery is readonly DeliveryNote[] {
  return Array.isArray(delivery);
}

/** Fixed parts of an event, a delivery and a run, about as the heap holds them. */
const EVENT_BYTES = 240;
const DELIVERY_BYTES = 64;
const RUN_BYTES = 160;

/** About what a run takes: a fixed part and the error's text. */
function runBytes(run: RunNote): number {
  const error = run.run.error;
  return RUN_BYTES + (error === undefined ? 0 : error.message.length + (error.stack?.length ?? 0));
}

export function runsBytes(runs: readonly RunNote[] | undefined): number {
  let bytes = 0;
  if (runs !== undefined) for (const run of runs) bytes += runBytes(run);
  return bytes;
}

/** A webhook event's payload without its parsed body (the values are the payload's own); undefined when it has no body. */
function withoutBody(payload: unknown): Record<string, unknown> | undefined {
  if (typeof payload !== "object" || payload === null || Array.isArray(payload) || !("body" in payload)) return undefined;
  const { body: _fromRaw, ...rest } = payload as Record<string, unknown>;
  return rest;
}

/** The payload as it is now (plain data copied exactly in one walk, anything else through the codec); as it is when it cannot be copied. */
export function snapshot(payload: unknown): unknown {
  try {
    return exactForm(payload, "payload");
  } catch {
    return payload;
  }
}

