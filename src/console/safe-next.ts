import type { ConsolePaths } from "./console-paths";

/**
 * Where to go after signing in or a bulk action: a path of this console only, never another
 * site ("//evil.example", "/\\evil.example") nor a path outside the console.
 */
export function safeNext(value: string, paths: ConsolePaths): string {
  const fallback = paths.overview();
  if (!value.startsWith("/") || value.startsWith("//") || value.includes("\\") || /[\r\n]/.test(value)) return fallback;
  if (paths.base !== "" && value !== paths.base && !value.startsWith(`${paths.base}/`) && !value.startsWith(`${paths.base}?`)) return fallback;
  return value;
}
