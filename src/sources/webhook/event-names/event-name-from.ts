import type { EventNamer } from "./event-namer";

/** Where a sender without a verifier here puts its event's name: one header, or one body field. */
export interface EventNameField {
  /** A request header, e.g. "x-event-type". */
  header?: string;
  /** A dot path into the JSON body, e.g. "type" or "meta.event". */
  bodyField?: string;
}

/**
 * An `eventName` for a source, reading the name from a header or a body field (the YAML
 * `eventName: {header: ...}` is built with it). Only text names count; anything else names nothing.
 * Throws a TypeError unless exactly one of `header` and `bodyField` is a non-empty string.
 */
export function eventNameFrom(field: EventNameField): EventNamer {
  const { header, bodyField } = field ?? {};
  const given = [header, bodyField].filter((v) => v !== undefined);
  if (given.length !== 1 || given.some((v) => typeof v !== "string" || v.length === 0 || /^\.|\.\.|\.$/.test(v))) {
    throw new TypeError("eventName: give exactly one of header (a header name) or bodyField (a dot path into the body, e.g. meta.event)");
  }
  const text = (value: unknown) => (typeof value === "string" && value.length > 0 ? value : undefined);
  if (header !== undefined) {
    const name = header.toLowerCase();
    return (event) => text(event.headers[name]);
  }
  const path = bodyField!.split(".");
  return (event) => {
    let value: unknown = event.body;
    for (const key of path) {
      if (typeof value !== "object" || value === null || Buffer.isBuffer(value) || !Object.hasOwn(value, key)) return undefined;
      value = (value as Record<string, unknown>)[key];
    }
    return text(value);
  };
}
