/** A declarative filter once checked: what `parseFilter` builds and `filterPredicate` runs. */

export type Scalar = string | number | boolean | null;

/** Where a condition looks: a header, a query parameter, or a JSON body path ([] is the whole body). */
export interface FieldRef {
  readonly root: "headers" | "query" | "body";
  readonly keys: readonly string[];
}

export type Comparison =
  | { readonly op: "equals"; readonly value: Scalar }
  | { readonly op: "oneOf"; readonly values: readonly Scalar[] }
  | { readonly op: "exists"; readonly value: boolean }
  | { readonly op: "prefix"; readonly value: string }
  | { readonly op: "gt" | "gte" | "lt" | "lte"; readonly value: number };

export type FilterNode =
  | { readonly kind: "allOf"; readonly of: readonly FilterNode[] }
  | { readonly kind: "anyOf"; readonly of: readonly FilterNode[] }
  | { readonly kind: "test"; readonly field: FieldRef; readonly comparison: Comparison };

export const OPERATORS = ["equals", "oneOf", "exists", "prefix", "gt", "gte", "lt", "lte"] as const;
export const COMBINATORS = ["allOf", "anyOf"] as const;
export const ROOTS = ["headers", "query", "body"] as const;
