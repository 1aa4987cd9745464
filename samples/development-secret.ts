import { randomBytes } from "node:crypto";

/** Variables that were unset, so the sample runs on their development values (logged at start). */
export const developmentValuesInUse: string[] = [];

/** Variables unset under NODE_ENV=production: the process refuses to start, naming all of them. */
const missingInProduction: string[] = [];

/**
 * A secret from the environment. Unset, the sample falls back to a development value so that
 * `npm start` works with no set-up, and says so in its start-up log; with NODE_ENV=production
 * it refuses to start instead, since a default secret anyone can read is no secret.
 *
 * Secrets are read as the modules load, before anything can catch an error: a missing one is
 * noted (with a random value nobody knows, never served), and once the modules have loaded, the
 * process ends with one line naming every missing variable.
 */
export function secretFromEnv(name: string, developmentValue: string): string {
  const value = process.env[name];
  if (value !== undefined && value !== "") return value;
  // "Production", "PRODUCTION" and "prod" are production too: a guard that a spelling turns off guards nothing.
  if (/^prod(?:uction)?$/i.test((process.env.NODE_ENV ?? "").trim())) {
    if (missingInProduction.push(name) === 1) process.nextTick(refuseToStart);
    return randomBytes(32).toString("hex");
  }
  developmentValuesInUse.push(name);
  return developmentValue;
}

function refuseToStart(): never {
  const verb = missingInProduction.length > 1 ? "are" : "is";
  console.error(`cannot start: ${missingInProduction.join(", ")} ${verb} not set (development values are refused when NODE_ENV=production)`);
  process.exit(1);
}
