/**
 * Whether a postgres:// URL most likely holds a user or password with an unencoded `#`, `/`
 * or `?`: the URL then parses, but its authority ends inside the password, and the rest of the
 * password becomes a port, a database name or a query (and shows wherever those are shown).
 * Signs: a fragment (which means nothing to the driver), or an `@` after the authority that
 * held none, in the path or in a query's first key.
 */
export function credentialsMisread(url: string): boolean {
  const parts = /^postgres(?:ql)?:\/\/([^/?#]*)([^?#]*)(\?[^#]*)?(#[\s\S]*)?$/i.exec(url);
  if (parts === null) return true;
  const [, authority, path, query, fragment] = parts;
  if (fragment !== undefined) return true;
  if (authority.includes("@")) return false;
  return path.includes("@") || (query !== undefined && /^\?[^=&]*@/.test(query));
}
