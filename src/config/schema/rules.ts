import "reflect-metadata";
import { Transform, Type } from "class-transformer";
import { Allow, IsDefined, ValidateBy, ValidateIf, ValidateNested } from "class-validator";
import { didYouMean } from "../../util/did-you-mean";
import { eventPatternProblem } from "../../sources/webhook/event-names/event-pattern";
import { isPostgresUrl, postgresUrlProblem } from "../../store/postgres/postgres-options";

/**
 * The property rules of the YAML schema: class-validator decorators with one message each,
 * worded to follow a key path ("resources.github.port: must be an integer from 0 to 65535").
 * Numeric and boolean keys also accept the same value written as a string, so that
 * `port: ${PORT}` works; string keys never convert anything.
 */

type Constructor = new () => object;

function compose(...decorators: PropertyDecorator[]): PropertyDecorator {
  return (target, key) => {
    for (const decorator of decorators) decorator(target, key);
  };
}

function rule(name: string, message: string | ((value: unknown) => string), validate: (value: unknown) => boolean): PropertyDecorator {
  const text = typeof message === "string" ? () => message : (args?: { value: unknown }) => message(args?.value);
  return ValidateBy({ name, validator: { validate: (value: unknown) => validate(value), defaultMessage: text } });
}

/** ' (did you mean "json"?)' when `value` is a near miss of one of `values`. */
function guessOf(value: unknown, values: readonly string[]): string {
  const guess = typeof value === "string" ? didYouMean(value, values) : undefined;
  return guess ? ` (did you mean "${guess}"?)` : "";
}

export function isMapping(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value) && !Buffer.isBuffer(value);
}

const NUMBER_TEXT = /^-?(?:\d+|\d*\.\d+)(?:[eE][-+]?\d+)?$/;

/** "8080" -> 8080 and "true" -> true, for values that came from `${ENV}` (or were quoted). */
export function fromText(value: unknown): unknown {
  if (typeof value !== "string") return value;
  const text = value.trim();
  if (NUMBER_TEXT.test(text)) return Number(text);
  if (text === "true") return true;
  if (text === "false") return false;
  return value;
}

const coerce = Transform(({ value }) => fromText(value), { toClassOnly: true });

/** The key may be left out (an explicit `null`, as in `port:` with no value, is still checked). */
export function Optional(): PropertyDecorator {
  return ValidateIf((_object: object, value: unknown) => value !== undefined);
}

export function Required(): PropertyDecorator {
  return IsDefined({ message: "is required" });
}

/** Any value; what it means is checked by whoever uses it. */
export function AnyValue(): PropertyDecorator {
  return Allow();
}

export function Integer(min: number, max = Number.MAX_SAFE_INTEGER): PropertyDecorator {
  const range = max === Number.MAX_SAFE_INTEGER ? (min === 0 ? " (0 or more)" : ` (${min} or more)`) : ` from ${min} to ${max}`;
  return compose(coerce, rule("integer", `must be an integer${range}`, (v) => Number.isInteger(v) && (v as number) >= min && (v as number) <= max));
}

export function Decimal(min: number): PropertyDecorator {
  return compose(coerce, rule("decimal", `must be a number (${min} or more)`, (v) => typeof v === "number" && Number.isFinite(v) && v >= min));
}

export function Flag(): PropertyDecorator {
  return compose(coerce, rule("flag", "must be true or false", (v) => typeof v === "boolean"));
}

/** A non-empty string, optionally matching `pattern` (described by `hint`). */
export function Text(pattern?: RegExp, hint?: string): PropertyDecorator {
  const message = pattern ? `must be ${hint ?? `a string matching ${pattern}`}` : "must be a non-empty string";
  return rule("text", message, (v) => typeof v === "string" && v.length > 0 && (!pattern || pattern.test(v)));
}

export function OneOf(values: readonly string[]): PropertyDecorator {
  return rule("oneOf", (v) => `must be one of: ${values.join(", ")}${guessOf(v, values)}`, (v) => typeof v === "string" && values.includes(v));
}

/** A non-empty list of HTTP method names from `values` (any case). */
export function MethodList(values: readonly string[]): PropertyDecorator {
  const known = (item: unknown) => typeof item === "string" && values.includes(item.toUpperCase());
  return rule(
    "methodList",
    (v) => {
      const unknown = Array.isArray(v) ? v.find((item) => !known(item)) : undefined;
      const which = typeof unknown === "string" ? `; "${unknown}" is not one${guessOf(unknown.toUpperCase(), values)}` : "";
      return `must be a non-empty list of HTTP methods (${values.join(", ")})${which}`;
    },
    (v) => Array.isArray(v) && v.length > 0 && v.every(known),
  );
}

/** A non-empty list of strings, each matching `pattern` when given. */
export function TextList(pattern?: RegExp, hint = "strings"): PropertyDecorator {
  return rule(
    "textList",
    `must be a non-empty list of ${hint}`,
    (v) => Array.isArray(v) && v.length > 0 && v.every((item) => typeof item === "string" && item.length > 0 && (!pattern || pattern.test(item))),
  );
}

/** A string, or a non-empty list of strings (several secrets or tokens while rotating). */
export function TextOrTextList(): PropertyDecorator {
  return rule(
    "textOrList",
    "must be a non-empty string or a non-empty list of them",
    (v) => (typeof v === "string" && v.length > 0) || (Array.isArray(v) && v.length > 0 && v.every((i) => typeof i === "string" && i.length > 0)),
  );
}

/** A mapping of strings to strings (HTTP headers). */
export function TextMapping(): PropertyDecorator {
  return rule("textMapping", "must be a mapping of names to strings", (v) => isMapping(v) && Object.values(v).every((x) => typeof x === "string"));
}

/** A mapping whose content is checked elsewhere (resources, auth). */
export function Mapping(): PropertyDecorator {
  return rule("mapping", "must be a mapping", isMapping);
}

/** A nested mapping validated by `cls`. */
export function Section(cls: () => Constructor): PropertyDecorator {
  return compose(
    Type(cls),
    rule("section", "must be a mapping", isMapping),
    ValidateNested({ message: "must be a mapping" }),
  );
}

/**
 * `true` (on, with defaults), `false` (off), or a mapping validated by `cls` (on, with these
 * settings): `metrics: true` or `metrics: {port: 9464}`. `true` reads as an empty mapping and
 * `false` as the key left out.
 */
export function FlagOrSection(cls: () => Constructor): PropertyDecorator {
  return compose(
    Type(cls),
    Transform(
      ({ value }) => {
        const v = fromText(value);
        if (v === true) return new (cls())();
        return v === false ? undefined : v;
      },
      { toClassOnly: true },
    ),
    rule("flagOrSection", "must be true, false or a mapping", isMapping),
    ValidateNested({ message: "must be true, false or a mapping" }),
  );
}

/**
 * Like FlagOrSection, for what is on unless turned off (`history`): `true` reads as an empty
 * mapping, and `false` stays `false`.
 */
export function SwitchOrSection(cls: () => Constructor): PropertyDecorator {
  return compose(
    Type(cls),
    Transform(
      ({ value }) => {
        const v = fromText(value);
        return v === true ? new (cls())() : v;
      },
      { toClassOnly: true },
    ),
    ValidateIf((_object: object, value: unknown) => value !== false),
    rule("switchOrSection", "must be true, false or a mapping", isMapping),
    ValidateNested({ message: "must be true, false or a mapping" }),
  );
}

/** A non-empty list of mappings, each validated by `cls`. */
export function SectionList(cls: () => Constructor): PropertyDecorator {
  return compose(
    Type(cls),
    rule("sectionList", "must be a non-empty list", (v) => Array.isArray(v) && v.length > 0),
    ValidateNested({ each: true, message: "must be a mapping" }),
  );
}

/**
 * `trustProxy`: true/false, a hop count, or addresses/CIDRs/presets as a comma-separated
 * string or a list.
 */
export function TrustProxySetting(): PropertyDecorator {
  return compose(
    coerce,
    rule(
      "trustProxy",
      'must be true, false, a hop count, or addresses/CIDRs ("loopback", "10.0.0.0/8", ...) as a string or a list',
      (v) =>
        typeof v === "boolean" ||
        (Number.isInteger(v) && (v as number) >= 0) ||
        (typeof v === "string" && v.length > 0) ||
        (Array.isArray(v) && v.every((i) => typeof i === "string" && i.length > 0)),
    ),
  );
}

/** A store: one of the engines' names, or a PostgreSQL connection string (usually `${DATABASE_URL}`). */
export function StoreSetting(engines: readonly string[]): PropertyDecorator {
  const urlProblem = (v: unknown) => (typeof v === "string" && isPostgresUrl(v) ? postgresUrlProblem(v) : undefined);
  return rule(
    "store",
    (v) => urlProblem(v) ?? `must be ${engines.join(", ")} or a postgres:// URL${guessOf(v, engines)}`,
    (v) => typeof v === "string" && (engines.includes(v) || (/^postgres(?:ql)?:\/\/./.test(v) && urlProblem(v) === undefined)),
  );
}

/** A task's `on`: an event name or pattern, or a non-empty list of them ("pull_request.opened", "invoice.*"). */
export function EventNames(): PropertyDecorator {
  const problemOf = (v: unknown): string | undefined => {
    const list = typeof v === "string" ? [v] : v;
    if (!Array.isArray(list) || list.length === 0) return "";
    for (const item of list) {
      const problem = eventPatternProblem(item);
      if (problem !== undefined) return problem;
    }
    return undefined;
  };
  return rule(
    "eventNames",
    (v) => {
      const problem = problemOf(v);
      return `must be an event name or a non-empty list of them ("pull_request.opened", [push, "invoice.*"])${problem ? `; ${problem}` : ""}`;
    },
    (v) => problemOf(v) === undefined,
  );
}
