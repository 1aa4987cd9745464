import type { DeliveryNote, EventNote, EventOrigin, RunNote } from "../history";
import { handedOnForm } from "../payload-codec";
import { exactJson } from "./exact-json";
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
  /** The one delivery of most events as it is; an array only for several (or none). */
  private readonly delivery: DeliveryNote | readonly DeliveryNote[];
  /**
   * As it was when noted: its JSON text when that gives it back exactly (`json`), else a copy;
   * without its body when `fromRaw` (the raw bytes give it back when read).
   */
  private readonly payload: unknown;
  private readonly json: boolean;
  readonly raw: Buffer | undefined;
  readonly fromRaw: boolean;
  readonly parentId: string | undefined;
  readonly replayOf: string | undefined;
  readonly traceId: string | undefined;
  /** Its runs in the order noted: the first alone (most events run once), an array from the second on. */
  private runs: RunNote | RunNote[] | undefined = undefined;
  /** Ids of the events its runs emitted and of its replays, in the order noted: an id alone, or an array from the second on. */
  private children: string | string[] | undefined = undefined;
  private replays: string | string[] | undefined = undefined;
  /** Estimated size of the payload, computed when first asked. */
  private payloadBytes = -1;

  constructor(note: EventNote) {
    this.id = note.id;
    this.origin = note.origin;
    this.name = note.name;
    this.receivedAt = note.receivedAt;
    this.delivery = note.deliveries.length === 1 ? note.deliveries[0] : note.deliveries;
    this.raw = note.raw;
    // Kept now: the task that receives the same object may change it before anyone reads it.
    // A body the raw bytes give back is not kept: it is parsed from them again when read.
    const rest = note.bodyFromRaw === true && note.raw !== undefined ? withoutBody(note.payload) : undefined;
    this.fromRaw = rest !== undefined;
    const kept = rest ?? note.payload;
    const json = exactJson(kept);
    this.json = json !== undefined;
    this.payload = json ?? snapshot(kept);
    this.parentId = note.parentId;
    this.replayOf = note.replayOf;
    this.traceId = note.traceId;
  }

  get deliveries(): readonly DeliveryNote[] {
    const { delivery } = this;
    return isList(delivery) ? delivery : [delivery];
  }

  /** The payload as noted (the body left out parsed again from the raw bytes, as it arrived); fresh objects when `fresh`. */
  payloadNow(): { readonly payload: unknown; readonly fresh: boolean } {
    const kept = this.json ? (JSON.parse(this.payload as string) as unknown) : this.payload;
    if (!this.fromRaw || this.raw === undefined) return { payload: kept, fresh: this.json };
    const rest = kept as Record<string, unknown>;
    const headers = rest.headers as Record<string, unknown> | undefined;
    const contentType = typeof headers?.["content-type"] === "string" ? (headers["content-type"] as string) : undefined;
    let body: unknown;
    try {
      body = parseBody("auto", this.raw, contentType);
    } catch {
      body = null; // it parsed when it came in: only a changed parser could fail here
    }
    return { payload: { body, ...rest }, fresh: this.json };
  }

  /** A copy of the payload the caller may change. */
  payloadCopy(): unknown {
    const { payload, fresh } = this.payloadNow();
    return fresh ? payload : snapshot(payload);
  }

  runList(): readonly RunNote[] {
    const { runs } = this;
    return runs === undefined ? [] : Array.isArray(runs) ? runs : [runs];
  }

  addRun(run: RunNote): void {
    const { runs } = this;
    if (runs === undefined) this.runs = run;
    else if (Array.isArray(runs)) runs.push(run);
    else this.runs = [runs, run];
  }

  /** Runs noted before the event itself. */
  adoptRuns(runs: RunNote[]): void {
    this.runs = runs;
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

  /** About what the event would take written out: its raw bytes, its payload as JSON, its runs, some overhead. */
  bytes(): number {
    if (this.payloadBytes < 0) this.payloadBytes = payloadBytes(this.payloadNow().payload);
    return 128 + (this.raw?.length ?? 0) + this.payloadBytes + this.deliveries.length * 64 + runsBytes(this.runList());
  }
}

export type LinkKind = "children" | "replays";

function isList(delivery: DeliveryNote | readonly DeliveryNote[]): delivery is readonly DeliveryNote[] {
  return Array.isArray(delivery);
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

/** A webhook event's payload without its parsed body (the values are the payload's own); undefined when it has no body. */
function withoutBody(payload: unknown): Record<string, unknown> | undefined {
  if (typeof payload !== "object" || payload === null || Array.isArray(payload) || !("body" in payload)) return undefined;
  const { body: _fromRaw, ...rest } = payload as Record<string, unknown>;
  return rest;
}

/** The payload as it is now (plain data copied in one walk, anything else through the codec); as it is when it cannot be copied. */
export function snapshot(payload: unknown): unknown {
  try {
    return handedOnForm(payload, "payload");
  } catch {
    return payload;
  }
}

