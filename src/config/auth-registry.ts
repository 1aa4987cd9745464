import { BearerAuth } from "../sources/webhook/bearer-auth";
import type { WebhookAuth } from "../sources/webhook/auth";
import { createVerifier, VERIFIER_TYPES, type VerifierConfig } from "../sources/webhook/verifiers/index";
import { didYouMean, unknownKeyMessage } from "../util/did-you-mean";
import type { IssueList } from "./issue-list";
import type { KeySegment } from "./key-path";
import { isMapping } from "./schema/rules";

/** How one `auth.type` of the YAML becomes a WebhookAuth. */
export interface AuthKind {
  /** The key holding the token or secret (a string, or a list while rotating). */
  readonly credential: "token" | "secret";
  /** Whether keys other than `type` and the credential are allowed (passed on as options). */
  readonly takesOptions: boolean;
  /** Builds the authenticator; throws a TypeError naming what is wrong. */
  create(credential: string | string[], options: Record<string, unknown>): WebhookAuth;
}

/**
 * `auth.type` -> constructor. `bearer` is BearerAuth; every other type is a sender's signature
 * verifier, built by `createVerifier` with the rest of the block as its options
 * (`{type: github, secret: ${GITHUB_SECRET}}`, `{type: stripe, secret: ..., toleranceSeconds: 300}`).
 * A new scheme is one more row here.
 */
export const AUTH_KINDS: Readonly<Record<string, AuthKind>> = {
  bearer: { credential: "token", takesOptions: false, create: (token) => new BearerAuth(token) },
  ...Object.fromEntries(
    VERIFIER_TYPES.map((type): [string, AuthKind] => [
      type,
      {
        credential: "secret",
        takesOptions: true,
        create: (secret, options) => createVerifier({ ...options, type, secret } as VerifierConfig),
      },
    ]),
  ),
};

/**
 * Checks an `auth:` block and builds its authenticator; records problems under `path` and
 * returns undefined when it cannot be built.
 */
export function buildAuth(block: unknown, path: readonly KeySegment[], issues: IssueList): WebhookAuth | undefined {
  if (!isMapping(block)) {
    issues.add(path, "must be a mapping with a type (bearer, github, stripe, ...)");
    return undefined;
  }
  const types = Object.keys(AUTH_KINDS);
  const { type, ...rest } = block;
  if (type === undefined) {
    const typo = misspelt(rest, "type");
    if (typo !== undefined) issues.addUnknownKey([...path, typo], `unknown key (did you mean "type"?)`);
    else issues.add([...path, "type"], `is required; one of: ${types.join(", ")}`);
    return undefined;
  }
  const kind = typeof type === "string" && Object.hasOwn(AUTH_KINDS, type) ? AUTH_KINDS[type] : undefined;
  if (!kind) {
    const guess = typeof type === "string" ? didYouMean(type, types) : undefined;
    issues.add([...path, "type"], `must be one of: ${types.join(", ")}${guess ? ` (did you mean "${guess}"?)` : ""}`);
    return undefined;
  }
  const { [kind.credential]: credential, ...options } = rest;
  let ok = true;
  // A misspelt credential key is reported as that, not as a missing credential plus an unknown key.
  const typo = credential === undefined ? misspelt(options, kind.credential) : undefined;
  if (typo !== undefined) {
    issues.addUnknownKey([...path, typo], `unknown key (did you mean "${kind.credential}"?)`);
    ok = false;
  } else if (credential === undefined) {
    issues.add([...path, kind.credential], `is required for auth type ${String(type)}`);
    ok = false;
  } else if (credential === "" || (Array.isArray(credential) && credential.includes(""))) {
    // `${VAR}` of a variable set to nothing: the file already keeps it out, the environment is what to fix.
    issues.add([...path, kind.credential], "is empty: is the environment variable that should hold it set to nothing? (must be a non-empty string or a non-empty list of them)");
    ok = false;
  } else if (!isCredential(credential)) {
    issues.add([...path, kind.credential], "must be a non-empty string or a non-empty list of them (use ${ENV_VAR} to keep it out of the file)");
    ok = false;
  }
  if (!kind.takesOptions) {
    for (const key of Object.keys(options)) {
      if (key === typo) continue;
      issues.addUnknownKey([...path, key], unknownKeyMessage(key, ["type", kind.credential]));
      ok = false;
    }
  }
  if (!ok) return undefined;
  try {
    return kind.create(credential as string | string[], options);
  } catch (error) {
    issues.add(path, error instanceof Error ? error.message : String(error));
    return undefined;
  }
}

function isCredential(value: unknown): value is string | string[] {
  if (typeof value === "string") return value.length > 0;
  return Array.isArray(value) && value.length > 0 && value.every((v) => typeof v === "string" && v.length > 0);
}

/** The key of `block` that is a near miss of `wanted`, if any. */
function misspelt(block: Record<string, unknown>, wanted: string): string | undefined {
  return Object.keys(block).find((key) => didYouMean(key, [wanted]) !== undefined);
}
