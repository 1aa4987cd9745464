import { Packr } from "msgpackr";
import { PAYLOAD_ENCODING } from "../payload-codec";

const PROTO = Buffer.from("__proto__");
/** Reads maps as Maps: msgpackr renames a `__proto__` key to `__proto_` when it reads a map into an object. */
const asMaps = new Packr({ ...PAYLOAD_ENCODING, mapsAsObjects: false });

/**
 * Decodes a payload so that a `__proto__` key (a query string or a JSON body may hold one)
 * comes back as the own property it was, as on the other engines, instead of msgpackr's
 * `__proto_`. Only payloads whose bytes hold the name take the slower way.
 */
export function unpackKeepingProto(bytes: Buffer, unpack: (bytes: Buffer) => unknown): unknown {
  if (!bytes.includes(PROTO)) return unpack(bytes);
  return plain(asMaps.unpack(bytes));
}

/** Maps as plain objects (as the fast way reads them), every key an own data property. */
function plain(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(plain);
  if (!(value instanceof Map)) return value;
  const out: Record<string, unknown> = {};
  for (const [key, item] of value) {
    Object.defineProperty(out, String(key), { value: plain(item), enumerable: true, writable: true, configurable: true });
  }
  return out;
}
