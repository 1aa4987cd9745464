/**
 * The key of a class's standard-decorator metadata (`Class[Symbol.metadata]`). Compilers pass
 * standard decorators a `context.metadata` object only when `Symbol.metadata` exists, and
 * Node.js 20 does not define it yet, so it is defined here when missing, as
 * `Symbol.for("Symbol.metadata")`: the key the TypeScript docs suggest and esbuild and Babel
 * fall back to. It runs before any decorated class, since those classes import @Task.
 */
export const SYMBOL_METADATA: symbol = definedSymbolMetadata();

function definedSymbolMetadata(): symbol {
  const symbols = Symbol as unknown as { metadata?: symbol };
  if (typeof symbols.metadata !== "symbol") {
    Object.defineProperty(Symbol, "metadata", { value: Symbol.for("Symbol.metadata"), configurable: true, writable: false, enumerable: false });
  }
  return symbols.metadata as symbol;
}
