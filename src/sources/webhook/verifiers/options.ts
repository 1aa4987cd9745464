import { didYouMean } from "../../../util/did-you-mean";

/**
 * Validates a verifier's options object once, at construction: a plain object whose keys are
 * all known, so a typo in YAML (`tolerance:` for `toleranceSeconds:`) fails at start-up
 * instead of being ignored.
 */
export function checkOptions<T extends object>(owner: string, options: T | undefined, known: readonly string[]): Partial<T> {
  if (options === undefined || options === null) return {};
  if (typeof options !== "object" || Array.isArray(options)) {
    throw new TypeError(`${owner}: options must be an object`);
  }
  for (const key of Object.keys(options)) {
    if (!known.includes(key)) {
      const guess = didYouMean(key, known);
      const hint = known.length > 0 ? `${guess ? `did you mean "${guess}"?; ` : ""}known options: ${known.join(", ")}` : "it takes no options";
      throw new TypeError(`${owner}: unknown option "${key}" (${hint})`);
    }
  }
  return options;
}

/** A boolean option with a default. */
export function booleanOption(owner: string, name: string, value: unknown, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== "boolean") throw new TypeError(`${owner}: ${name} must be true or false, got ${String(value)}`);
  return value;
}

/** One of a fixed set of strings, with a default. */
export function choiceOption<C extends string>(owner: string, name: string, value: unknown, choices: readonly C[], fallback: C): C {
  if (value === undefined) return fallback;
  if (typeof value !== "string" || !(choices as readonly string[]).includes(value)) {
    throw new TypeError(`${owner}: ${name} must be one of ${choices.join(", ")}, got ${String(value)}`);
  }
  return value as C;
}
