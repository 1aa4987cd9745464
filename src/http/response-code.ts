import type { ServerResponse } from "node:http";

/**
 * The stable code of an answer ("duplicate", or an error code such as "signature_mismatch"),
 * noted by whoever sends it so that observers of the request (metrics, refusal logs) can
 * name it without parsing the body. Only non-plain answers are noted: a 2xx without a code
 * is an accepted event.
 */
const codes = new WeakMap<ServerResponse, string>();

export function noteResponseCode(res: ServerResponse, code: string): void {
  codes.set(res, code);
}

export function responseCodeOf(res: ServerResponse): string | undefined {
  return codes.get(res);
}
