import type { IncomingHttpHeaders } from "node:http";
import type { StateStore } from "../../store/store";

/** Where a sender puts its delivery id. */
export type DedupePreset = "github" | "standard-webhooks" | "svix" | "stripe" | "shopify" | "slack";

export interface DedupeOptions {
  /** A preset, or your own `header` / `bodyField`. */
  preset?: DedupePreset;
  /** Header holding the delivery id (lower or any case). */
  header?: string;
  /** Dot path of the delivery id in a JSON or form body, e.g. "id" or "event.id". */
  bodyField?: string;
  /** How long a delivery id is remembered (default 72 hours: longer than senders retry). */
  ttlMs?: number;
}

const PRESETS: Record<DedupePreset, { headers?: string[]; bodyField?: string; signedFamily?: boolean }> = {
  github: { headers: ["x-github-delivery"] },
  "standard-webhooks": { headers: ["webhook-id", "svix-id"], signedFamily: true },
  svix: { headers: ["svix-id", "webhook-id"], signedFamily: true },
  stripe: { bodyField: "id" },
  shopify: { headers: ["x-shopify-event-id", "x-shopify-webhook-id"] },
  slack: { bodyField: "event_id" },
};

export const DEFAULT_DEDUPE_TTL_MS = 72 * 3600 * 1000;

/** The resolved rule: which header(s) or body field give the key. */
export interface DedupeRule {
  readonly headers: readonly string[];
  readonly bodyPath: readonly string[] | undefined;
  readonly ttlMs: number;
  /**
   * Standard Webhooks / Svix: the id is read from the header family whose signature is present,
   * as the verifier reads it; the other family's id is not signed, and a replay could set it.
   */
  readonly signedFamily?: boolean;
}

export function resolveDedupe(options: DedupeOptions | DedupePreset, where: string): DedupeRule {
  const opts: DedupeOptions = typeof options === "string" ? { preset: options } : options;
  if (opts.preset !== undefined && !(opts.preset in PRESETS)) {
    throw new TypeError(`${where}: dedupe.preset must be one of ${Object.keys(PRESETS).join(", ")}`);
  }
  const preset = opts.preset ? PRESETS[opts.preset] : {};
  const headers = opts.header !== undefined ? [opts.header.toLowerCase()] : (preset.headers ?? []);
  const bodyField = opts.bodyField ?? (opts.header === undefined ? preset.bodyField : undefined);
  if (headers.length === 0 && bodyField === undefined) throw new TypeError(`${where}: dedupe needs a preset, a header or a bodyField`);
  const ttlMs = opts.ttlMs ?? DEFAULT_DEDUPE_TTL_MS;
  if (!(ttlMs > 0)) throw new TypeError(`${where}: dedupe.ttlMs must be a positive number`);
  return { headers, bodyPath: bodyField?.split("."), ttlMs, signedFamily: opts.header === undefined && preset.signedFamily === true };
}

/** The delivery id of a request, or undefined when it carries none (it is then not deduplicated). */
export function deliveryKey(rule: DedupeRule, headers: IncomingHttpHeaders, body: unknown): string | undefined {
  for (const name of rule.signedFamily ? signedFamilyId(headers, rule.headers) : rule.headers) {
    const value = headers[name];
    if (typeof value === "string" && value.length > 0 && value.length <= 512) return value;
  }
  if (rule.bodyPath === undefined) return undefined;
  let value: unknown = body;
  for (const part of rule.bodyPath) {
    if (typeof value !== "object" || value === null || Buffer.isBuffer(value)) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  if (typeof value === "number") return String(value);
  return typeof value === "string" && value.length > 0 && value.length <= 512 ? value : undefined;
}

/** The id header of the family StandardWebhooksSignature verifies: `webhook-*` unless only `svix-signature` is sent. */
function signedFamilyId(headers: IncomingHttpHeaders, fallback: readonly string[]): readonly string[] {
  if (headers["webhook-signature"] !== undefined) return ["webhook-id"];
  if (headers["svix-signature"] !== undefined) return ["svix-id"];
  return fallback;
}

/** How long a delivery id stays reserved by a process storing its event (longer than a store write can take). */
export const DEDUPE_RESERVATION_MS = 15_000;

/** The marker of a delivery whose event some process is storing right now. */
interface Reservation {
  readonly storing: string;
}

/**
 * The marker of a stored delivery whose sender waits for the task's outcome (ack "processed",
 * reply "result"): until `until` (epoch ms, past the wait's timeout) a failure may still drop
 * the event, so a copy must not be told it is a duplicate yet.
 */
interface AwaitedMarker {
  readonly awaited: string;
  readonly until: number;
}

/** A copy of a delivery already stored; `pendingUntil` is set while its outcome may still drop it. */
export interface Duplicate {
  readonly id: string;
  readonly pendingUntil?: number;
}

/** Slack for clocks of replicas that disagree a little. */
const CLOCK_SLACK_MS = 2_000;

/**
 * Remembers delivery ids once their event is stored. The first copy of a delivery reserves
 * its id with an atomic setIfAbsent (atomic across processes on a shared store, so copies
 * reaching several replicas at once make one event), stores the event, then replaces the
 * reservation with the event's id. Copies arriving meanwhile wait for the outcome: a
 * duplicate of the stored event, or their own turn when storing failed (the reservation is
 * removed, so a store failure never turns the sender's retry into a "duplicate") or the
 * reserving process died (the reservation expires).
 */
export class Deduplicator {
  private readonly pending = new Map<string, Promise<string | undefined>>();

  /**
   * `awaitMs`: set when the sender waits for the outcome (the source's ackTimeoutMs); the marker
   * then says "outcome pending" until `settled` or `forget` is called, or the wait is over.
   */
  constructor(
    private readonly state: StateStore,
    private readonly ttlMs: number,
    private readonly reservationMs = DEDUPE_RESERVATION_MS,
    private readonly awaitMs?: number,
    /** Namespaces read, never written, when `state` has no marker: those of before the source's tasks changed. */
    private readonly earlier: readonly StateStore[] = [],
  ) {}

  /** The awaited outcome of a stored delivery is final and not a drop: copies are duplicates from now on. */
  async settled(key: string, eventId: string): Promise<void> {
    await this.state.set(key, eventId, { ttlMs: this.ttlMs });
  }

  /** Forgets a delivery id, so that the next copy is stored (its first copy was refused after all). */
  async forget(key: string): Promise<void> {
    await this.state.delete(key);
  }

  /**
   * Runs `store` unless `key` was seen; resolves to the event first stored under it when this
   * one is a duplicate, or undefined when `store` ran (and succeeded).
   */
  async run(key: string, eventId: string, store: () => Promise<void>): Promise<Duplicate | undefined> {
    for (;;) {
      const inFlight = this.pending.get(key);
      if (inFlight !== undefined) {
        const original = await inFlight;
        if (original !== undefined) return this.awaitMs === undefined ? { id: original } : { id: original, pendingUntil: Date.now() + this.awaitMs };
        continue; // the first copy failed to store: this one tries in its place
      }
      const seen = (await this.state.get<string | Reservation | AwaitedMarker>(key)) ?? (await this.earlierMarker(key));
      if (typeof seen === "string") return { id: seen };
      if (seen !== undefined && "awaited" in seen) {
        // Past `until` the original's wait is over: its event follows the normal retry path.
        return Date.now() < seen.until ? { id: seen.awaited, pendingUntil: seen.until } : { id: seen.awaited };
      }
      if (seen !== undefined) {
        await new Promise((resolve) => setTimeout(resolve, 20)); // another process is storing it
        continue;
      }
      if (this.pending.has(key)) continue; // someone in this process started meanwhile
      let settle!: (id: string | undefined) => void;
      this.pending.set(key, new Promise((resolve) => (settle = resolve)));
      let reserved = false;
      try {
        reserved = await this.state.setIfAbsent<Reservation>(key, { storing: eventId }, { ttlMs: this.reservationMs });
      } catch (error) {
        settle(undefined);
        this.pending.delete(key);
        throw error;
      }
      if (!reserved) {
        // Another process reserved it between our look and our try: wait for its outcome.
        settle(undefined);
        this.pending.delete(key);
        continue;
      }
      try {
        await this.keepingReservation(key, eventId, store);
      } catch (error) {
        await this.state.delete(key).catch(() => undefined);
        settle(undefined);
        this.pending.delete(key);
        throw error;
      }
      // The event is stored: a marker that fails to write only means a later copy is not recognised.
      const marker: string | AwaitedMarker = this.awaitMs === undefined ? eventId : { awaited: eventId, until: Date.now() + this.awaitMs + CLOCK_SLACK_MS };
      await this.state.set(key, marker, { ttlMs: this.ttlMs }).catch(() => undefined);
      settle(eventId);
      this.pending.delete(key);
      return undefined;
    }
  }

  /** A stored delivery's marker in an earlier namespace (a reservation there is no one's any more). */
  private async earlierMarker(key: string): Promise<string | AwaitedMarker | undefined> {
    if (this.earlier.length === 0) return undefined;
    const found = await Promise.all(this.earlier.map((state) => state.get<string | Reservation | AwaitedMarker>(key)));
    return found.find((m): m is string | AwaitedMarker => typeof m === "string" || (m !== undefined && "awaited" in m));
  }

  /**
   * Runs `store`, renewing the reservation every third of its lifetime meanwhile: a store write
   * may outlast it (a slow database, a long statement timeout), and an expired reservation
   * would let a copy on another replica store a second event. Resolves once no renewal is in
   * flight, so that none lands after the marker that replaces it.
   */
  private async keepingReservation(key: string, eventId: string, store: () => Promise<void>): Promise<void> {
    let renewal: Promise<unknown> = Promise.resolve();
    const timer = setInterval(() => {
      renewal = renewal.then(() => this.state.set<Reservation>(key, { storing: eventId }, { ttlMs: this.reservationMs })).catch(() => undefined);
    }, Math.max(1, Math.floor(this.reservationMs / 3)));
    timer.unref();
    try {
      await store();
    } finally {
      clearInterval(timer);
      await renewal;
    }
  }
}
