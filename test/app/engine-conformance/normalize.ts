/**
 * What a user sees of an app, made comparable across engines: event ids become labels (the
 * ones a scenario named, else `#1`, `#2`... in the order first met), times and durations,
 * stacks and client ports become placeholders. Two engines that behave alike give deeply
 * equal observations.
 */

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
const TIME_KEYS = new Set(["receivedAt", "startedAt", "durationMs", "diedAt", "enqueuedAt", "received_at", "runAt", "oldestEnqueuedAt", "bucketStart"]);

export class Labels {
  private readonly names = new Map<string, string>();
  private unnamed = 0;

  /** Names an id the scenario knows (the id a `202` answered). */
  name(id: string, label: string): void {
    this.names.set(id, label);
  }

  label(id: string): string {
    let label = this.names.get(id);
    if (label === undefined) this.names.set(id, (label = `#${++this.unnamed}`));
    return label;
  }

  /** `value` with ids labelled and times blanked, undefined fields dropped, key order kept. */
  normalize(value: unknown): unknown {
    if (typeof value === "string") return value.replace(UUID, (id) => this.label(id));
    if (typeof value === "bigint") return `bigint:${value}`;
    if (value instanceof Date) return `date:${value.getTime()}`;
    if (Buffer.isBuffer(value)) return `buffer:${this.normalize(value.toString("utf8")) as string}`;
    if (Array.isArray(value)) return value.map((v) => this.normalize(v));
    if (typeof value !== "object" || value === null) return value;
    const out: Record<string, unknown> = {};
    // Key order kept: JSON.stringify shows it to a user.
    for (const key of Object.keys(value)) {
      const v = (value as Record<string, unknown>)[key];
      if (v === undefined) continue;
      if (TIME_KEYS.has(key)) out[key] = typeof v === "number" ? "<time>" : v;
      else if (key === "stack") out[key] = "<stack>";
      // A dead letter's message keeps the error's stack, whose frames name the runner's code path.
      else if (key === "lastError" && typeof v === "string") out[key] = this.normalize(v.split("\n")[0]);
      else if (key === "client") out[key] = "<client>";
      else if (key === "host" && typeof v === "string") out[key] = "<host>";
      else out[this.normalize(key) as string] = this.normalize(v);
    }
    return out;
  }
}

/** The error a call throws, as a user sees it (class name, message), or what it resolves to. */
export async function outcome(labels: Labels, call: () => Promise<unknown>): Promise<unknown> {
  try {
    return { resolved: labels.normalize(await call()) };
  } catch (error) {
    const e = error as Error;
    return { threw: e.constructor?.name, name: e.name, message: labels.normalize(e.message) };
  }
}
