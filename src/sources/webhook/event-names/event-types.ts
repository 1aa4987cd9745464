/**
 * Types of senders' events by name, for a task's `on` (checked spelling, completion) and the
 * event its handler gets. Types only: the payload types come from optional peer packages,
 * `@octokit/openapi-webhooks-types` (GitHub) and `stripe`, imported as types and never at run
 * time. Without them (and with skipLibCheck) `on` takes any string and bodies are `unknown`.
 */
import type { operations as GitHubOperations } from "@octokit/openapi-webhooks-types";
import type Stripe from "stripe";
import type { WebhookEvent } from "../webhook-event";
import type { WebhookSource } from "../webhook-source";
import type { Queue } from "../../../app/queue";

/*
 * An import that did not resolve (a peer package not installed, under skipLibCheck) is an
 * error type that behaves as `any`; `unknown extends T` holds for it (and for any or unknown
 * alone), where a resolved interface never does. Other any-tests are poisoned by the error type.
 */

type Snake<S extends string> = S extends `${infer A}-${infer B}` ? `${A}_${Snake<B>}` : S;
/** "pull-request/ready-for-review" (the package's key) -> "pull_request.ready_for_review" (what GitHub sends). */
type GitHubName<K> = K extends `${infer E}/${infer A}` ? `${Snake<E>}.${Snake<A>}` : K extends string ? Snake<K> : never;
type JsonBody<O> = O extends { requestBody: { content: { "application/json": infer B } } } ? B : unknown;

/** GitHub's events: name ("push", "pull_request.opened") -> payload. */
export type GitHubPayloads = unknown extends GitHubOperations ? undefined : { [K in keyof GitHubOperations as GitHubName<K>]: JsonBody<GitHubOperations[K]> };

/** Stripe's events: type ("checkout.session.completed") -> the `Stripe.Event` of that type. */
export type StripePayloads = unknown extends Stripe.Event ? undefined : { [T in Stripe.Event["type"]]: Extract<Stripe.Event, { type: T }> };

/** Senders whose event names and payloads are typed, by their verifier's `scheme`. */
export interface SenderPayloads {
  github: GitHubPayloads;
  stripe: StripePayloads;
}

/** Senders whose events are typed (when their types package is installed). */
export type TypedSender = keyof SenderPayloads;

/** The name -> payload map of sender `X`, or undefined when its events are not typed. */
export type PayloadsOf<X> = X extends keyof SenderPayloads ? SenderPayloads[X] : undefined;

/** "checkout.session.completed" -> "checkout" | "checkout.*" | "checkout.session" | "checkout.session.*". */
type Parents<N extends string> = N extends `${infer A}.${infer B}` ? A | `${A}.*` | `${A}.${Parents<B>}` : never;

/** The patterns `on` accepts for sender `X`: its names, their parents, wildcards; any string when untyped. */
export type EventPatternOf<X> = PayloadsOf<X> extends infer M ? (M extends object ? (keyof M & string) | Parents<keyof M & string> | "*" : string) : string;

/** The sender of a task source: the `S` of a WebhookSource<S>, never for queues. */
export type SenderOf<S> = S extends WebhookSource<infer X> ? X : never;

/**
 * What a task's `on` takes: one pattern or a list, checked against the source's sender; any
 * names for an untyped sender or a queue name; nothing for a typed Queue (its messages have no name).
 */
export type EventSelector<S> =
  S extends Queue<unknown> ? never : S extends WebhookSource<infer X> ? EventPatternOf<X> | readonly EventPatternOf<X>[] : string | readonly string[];

/**
 * What the overloads whose handler annotates its own event allow of `on`: nothing when the
 * source's sender has typed events. Those tasks take the typed overload, which checks the
 * handler against the events `on` selects; falling back here would let a handler of
 * `pull_request.opened` compile on `on: "push"`.
 */
export type UntypedOn<S> = S extends WebhookSource<infer X> ? (PayloadsOf<X> extends object ? { on?: undefined } : unknown) : unknown;

/** A pattern as the names it matches, a template literal type: "invoice.*" -> `invoice.${string}`. */
type PatternTemplate<P> = P extends "*" ? string : P extends `${infer Prefix}.*` ? `${Prefix}.${string}` : P extends string ? P | `${P}.${string}` : never;

/**
 * The names among `N` that pattern `P` matches (as event-pattern.ts matches them at run time).
 * Each name is tested against the union of templates, so a wide `P` (a generic constraint) costs
 * one pass over the names, not names times patterns.
 */
export type MatchedNames<N, P> = Extract<N, PatternTemplate<P>>;

/**
 * The event a task with `on: P` gets from sender `X`: one WebhookEvent per matching name, its
 * body that name's payload and its `name` that name, so checking `event.name` narrows the body.
 */
export type SenderEvent<X, P> =
  // A pattern not known yet (no `on`) or several senders at once: the plain named event. These
  // are what overload resolution meets on its way to another overload, and cost nothing here.
  string extends P
    ? WebhookEvent & { name: string }
    : TypedSender extends X
      ? WebhookEvent & { name: string }
      : PayloadsOf<X> extends infer M
        ? M extends object
          ? { [K in MatchedNames<keyof M & string, P>]: WebhookEvent<M[K]> & { name: K } }[MatchedNames<keyof M & string, P>]
          : WebhookEvent & { name: string }
        : never;

/** A GitHub event by name or pattern: `GitHubEvent<"pull_request.opened">`, `GitHubEvent<"issues">`. */
export type GitHubEvent<P extends EventPatternOf<"github">> = SenderEvent<"github", P>;

/** A Stripe event by type or pattern: `StripeEvent<"invoice.paid">`, `StripeEvent<"invoice.*">`. */
export type StripeEvent<P extends EventPatternOf<"stripe">> = SenderEvent<"stripe", P>;
