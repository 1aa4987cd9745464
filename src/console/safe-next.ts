import type { ConsolePaths } from "./console-paths";

/**
 * Where to go after signing in or a bulk action: a path of this console only, never another
 * site ("//evil.example", "/\\evil.example") nor a path outside the console ("/console/../x").
 */
export function safeNext(value: string, paths: ConsolePaths): string {
  const fallback = paths.overview();
  if (!value.startsWith("/") || value.startsWith("//") || value.includes("\\") || /[\r\n]/.test(value)) return fallback;
  if (paths.base !== "" && value !== paths.base && !value.startsWith(`${paths.base}/`) && !value.startsWith(`${paths.base}?`)) return fallback;
  // A browser resolves dot segments ("/console/../x", "%2e%2e") before it goes: out of the console.
  if (/(^|\/)(\.|%2e){1,2}(\/|\?|#|$)/i.test(value.split(/[?#]/, 1)[0]!)) return fallback;
  return value;
}
