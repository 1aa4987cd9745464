import type { DeliveryNote, EventNote, EventOrigin, RunNote } from "../history";
import { handedOnForm } from "../payload-codec";
import { NOT_PLAIN, plainCopy } from "../plain-data";
import { parseBody } from "../../sources/webhook/parse-body";

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
  readonly deliveries: readonly DeliveryNote[];
  /** A copy made when noted; without its body when `fromRaw` (the raw bytes give it back when read). */
  readonly payload: unknown;
  readonly raw: Buffer | undefined;
  readonly fromRaw: boolean;
  readonly parentId: string | undefined;
  readonly replayOf: string | undefined;
  readonly traceId: string | undefined;
  /** In the order noted. */
  runs: RunNote[] | undefined = undefined;
  /** Ids of the events its runs emitted, and of its replays, in the order noted. */
  children: string[] | undefined = undefined;
  replays: string[] | undefined = undefined;
  /** Estimated size: the payload's part computed when first asked. */
  payloadBytes = -1;

  constructor(note: EventNote) {
    this.id = note.id;
    this.origin = note.origin;
    this.name = note.name;
    this.receivedAt = note.receivedAt;
    this.deliveries = note.deliveries;
    this.raw = note.raw;
    // Copied now: the task that receives the same object may change it before anyone reads it.
    // A body the raw bytes give back is not copied: it is parsed from them again when read.
    const rest = note.bodyFromRaw === true && note.raw !== undefined ? withoutBody(note.payload) : undefined;
    this.fromRaw = rest !== undefined;
    this.payload = rest ?? snapshot(note.payload);
    this.parentId = note.parentId;
    this.replayOf = note.replayOf;
    this.traceId = note.traceId;
  }

  /** The payload as noted: a body left out is parsed again from the raw bytes, as it arrived. */
  payloadNow(): unknown {
    if (!this.fromRaw || this.raw === undefined) return this.payload;
    const rest = this.payload as Record<string, unknown>;
    const headers = rest.headers as Record<string, unknown> | undefined;
    const contentType = typeof headers?.["content-type"] === "string" ? (headers["content-type"] as string) : undefined;
    let body: unknown;
    try {
      body = parseBody("auto", this.raw, contentType);
    } catch {
      body = null; // it parsed when it came in: only a changed parser could fail here
    }
    return { body, ...rest };
  }

  addRun(run: RunNote): void {
    if (this.runs === undefined) this.runs = [run];
    else this.runs.push(run);
  }

  /** About what the event would take written out: its raw bytes, its payload as JSON, its runs, some overhead. */
  bytes(): number {
    if (this.payloadBytes < 0) this.payloadBytes = payloadBytes(this.payloadNow());
    return 128 + (this.raw?.length ?? 0) + this.payloadBytes + this.deliveries.length * 64 + runsBytes(this.runs);
  }
}

/** About what runs take: a fixed part and the error's text. */
export function runsBytes(runs: readonly RunNote[] | undefined): number {
  let bytes = 0;
  if (runs !== undefined) for (const r of runs) bytes += 64 + (r.run.error?.stack?.length ?? r.run.error?.message.length ?? 0);
  return bytes;
}

function payloadBytes(payload: unknown): number {
  try {
    return JSON.stringify(payload, (_key, value: unknown) => (Buffer.isBuffer(value) ? value.toString("base64") : value))?.length ?? 0;
  } catch {
    return 0;
  }
}

/** A copy of a webhook event's payload without its parsed body; undefined when it has no body. */
function withoutBody(payload: unknown): Record<string, unknown> | undefined {
  if (typeof payload !== "object" || payload === null || Array.isArray(payload) || !("body" in payload)) return undefined;
  const copied = plainCopyWithoutBody(payload as Record<string, unknown>);
  if (copied !== undefined) return copied;
  const { body: _fromRaw, ...rest } = payload as Record<string, unknown>;
  return snapshot(rest) as Record<string, unknown>;
}

/**
 * The payload without its body, copied in one walk as handedOnForm copies plain data (rather
 * than spread into a new object, then copied); undefined when it is not plain data.
 */
function plainCopyWithoutBody(record: Record<string, unknown>): Record<string, unknown> | undefined {
  if (Object.getPrototypeOf(record) !== Object.prototype || !Object.isExtensible(record) || Object.getOwnPropertySymbols(record).length > 0) return undefined;
  const out: Record<string, unknown> = {};
  for (const key in record) {
    if (key === "body") continue;
    if (key === "__proto__" || !(key as unknown as WellFormed).isWellFormed()) return undefined;
    const value = record[key];
    const copied = value === undefined ? undefined : plainCopy(value);
    if (copied === NOT_PLAIN) return undefined;
    out[key] = copied;
  }
  return out;
}

/** The payload as it is now (plain data copied in one walk, anything else through the codec); as it is when it cannot be copied. */
export function snapshot(payload: unknown): unknown {
  try {
    return handedOnForm(payload, "payload");
  } catch {
    return payload;
  }
}

/** String.prototype.isWellFormed (Node 20; the ES2022 lib does not declare it). */
interface WellFormed {
  isWellFormed(): boolean;
}
