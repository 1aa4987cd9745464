/**
 * Sets `key` on `target` as an own, plain data property. Assigned, a `__proto__` key (which
 * JSON.parse and query strings make as an own key) would set the object's prototype instead
 * and be lost: that one is defined.
 */
export function setOwnKey(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === "__proto__") Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}
