/** Variables that were unset, so the sample runs on their development values (logged at start). */
export const developmentValuesInUse: string[] = [];

/**
 * A secret from the environment. Unset, the sample falls back to a development value so that
 * `npm start` works with no set-up, and says so in its start-up log; with NODE_ENV=production
 * it refuses to start instead, since a default secret anyone can read is no secret.
 */
export function secretFromEnv(name: string, developmentValue: string): string {
  const value = process.env[name];
  if (value !== undefined && value !== "") return value;
  // "Production", "PRODUCTION" and "prod" are production too: a guard that a spelling turns off guards nothing.
  if (/^prod(?:uction)?$/i.test((process.env.NODE_ENV ?? "").trim())) throw new Error(`${name} is not set (development values are refused when NODE_ENV=production)`);
  developmentValuesInUse.push(name);
  return developmentValue;
}
