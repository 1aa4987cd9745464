/** How a decorator was called: by legacy (`experimentalDecorators`) or standard (TC39) rules. */
export type DecoratorCall =
  | { readonly form: "standard"; readonly value: unknown; readonly context: StandardContext }
  | { readonly form: "legacy-member"; readonly target: object; readonly key: string | symbol; readonly descriptor: PropertyDescriptor | undefined }
  | { readonly form: "legacy-class"; readonly target: Function }
  | { readonly form: "unknown" };

/** What every standard decorator context has, and the fields this package reads. */
export interface StandardContext {
  readonly kind: "class" | "method" | "getter" | "setter" | "field" | "accessor";
  readonly name: string | symbol | undefined;
  readonly static?: boolean;
  readonly private?: boolean;
  readonly metadata?: Record<PropertyKey, unknown>;
}

const KINDS: ReadonlySet<unknown> = new Set(["class", "method", "getter", "setter", "field", "accessor"]);

/**
 * Tells the two forms apart by their arguments: a standard decorator gets `(value, context)`
 * with `context.kind`; a legacy member decorator gets `(prototype, key, descriptor)` and a
 * legacy class decorator `(constructor)`.
 */
export function decoratorCall(args: readonly unknown[]): DecoratorCall {
  const [first, second, third] = args;
  if (args.length === 2 && typeof second === "object" && second !== null && KINDS.has((second as { kind?: unknown }).kind)) {
    return { form: "standard", value: first, context: second as StandardContext };
  }
  if (args.length === 3 && (typeof first === "object" || typeof first === "function") && first !== null && (typeof second === "string" || typeof second === "symbol")) {
    return { form: "legacy-member", target: first, key: second, descriptor: third as PropertyDescriptor | undefined };
  }
  if (args.length === 1 && typeof first === "function") return { form: "legacy-class", target: first };
  return { form: "unknown" };
}
