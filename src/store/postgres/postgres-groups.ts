import { emitList, type ClaimedGroups, type EmitRecord, type GroupRule, type QueuedMessage } from "../store";
import type { NewRow } from "./batched-writes";
import { GroupClaimSql } from "./group-claim-sql";
import { GroupCompleteSql } from "./group-complete-sql";
import type { Held, HeldMessages } from "./held-messages";
import { decodeMessage, encodeMessage } from "./message-rows";
import type { PostgresQueryResult } from "./postgres-options";
import { unavailableError } from "./postgres-health";

/** What the group claims need of the store: its statements, its claims held, its counts and wake-ups. */
export interface GroupHost {
  readonly schema: string;
  readonly token: string;
  readonly channel: string;
  readonly leaseMs: number;
  readonly held: HeldMessages;
  /** Runs one statement (refused while the store is not open; tracks the database's health). */
  readonly query: (text: string, values: unknown[], name?: string) => Promise<PostgresQueryResult>;
  readonly adjustDepth: (queue: string, delta: number) => void;
  /** Wakes this process's consumers of `queue`. */
  readonly notify: (queue: string) => void;
  /** A write about a held message failed: give it back. */
  readonly abandon: (held: Held) => void;
}

/** PostgreSQL's largest integer: the claim statement's maxSize parameter. */
const MAX_INTEGER = 2_147_483_647;

/** Most groups one claim hands out: a bound for a limit such as Infinity. */
const MAX_GROUPS = 100_000;

/**
 * Debounced and batched tasks on PostgreSQL: groups claimed under the queue's lock
 * (group-claim-sql.ts), completed all at once with their output (group-complete-sql.ts).
 * Claimed group messages are held as any claim: their leases are renewed while the task
 * runs, and retries and dead letters find them by id.
 */
export class PostgresGroups {
  private readonly claims: GroupClaimSql;
  private readonly completions: GroupCompleteSql;

  constructor(private readonly host: GroupHost) {
    this.claims = new GroupClaimSql(host.schema);
    this.completions = new GroupCompleteSql(host.schema);
  }

  async claim(queue: string, rule: GroupRule, limit: number): Promise<ClaimedGroups> {
    checkGroupRule(rule);
    const { host } = this;
    const n = limit > 0 ? Math.min(Math.floor(limit), MAX_GROUPS) : 0;
    const debounce = rule.kind === "debounce";
    const values = [queue, debounce, debounce ? rule.periodMs : null, rule.maxWaitMs ?? null, rule.maxSize, n, Date.now(), host.token, host.leaseMs];
    const { rows } = await host.query(this.claims.claim(), values);
    const messages = rows.filter((row) => row.seq !== null);
    // Groups in the claim's order; each oldest first, messages of one millisecond in queue order.
    messages.sort((a, b) => Number(a.group_no) - Number(b.group_no) || Number(a.enqueued_at) - Number(b.enqueued_at) || Number(a.seq) - Number(b.seq));
    const groups: QueuedMessage[][] = [];
    let current: unknown;
    for (const row of messages) {
      // Finishing a group frees its debounce key: wake this process's claimers then (`keyed`).
      host.held.hold({ seq: Number(row.seq), queue, id: row.id as string, keyed: true });
      if (row.group_no !== current) groups.push([]);
      current = row.group_no;
      groups[groups.length - 1].push(decodeMessage(row));
    }
    const summary = rows.find((row) => row.seq === null);
    const nextDueAt = summary?.next_due_at === null || summary === undefined ? undefined : Number(summary.next_due_at);
    return nextDueAt === undefined ? { groups, collecting: Number(summary?.collecting ?? 0) } : { groups, nextDueAt, collecting: Number(summary?.collecting ?? 0) };
  }

  async complete(queue: string, ids: readonly string[], emit?: EmitRecord | readonly EmitRecord[]): Promise<void> {
    const { host } = this;
    const held: Held[] = [];
    for (const id of new Set(ids)) {
      const h = host.held.find(queue, id);
      if (h) held.push(h);
    }
    const emits = emitList(emit);
    if (held.length === 0 && emits.length === 0) return;
    // An output that cannot be encoded is the task's failure, not the store's: a plain error.
    const out: NewRow[] = emits.map((e) => ({ queue: e.queue, row: encodeMessage(e.queue, e.message) }));
    const wake = new Set(out.map((o) => o.queue));
    if (held.length > 0) wake.add(queue);
    const { text, values } = this.completions.complete(
      held.map((h) => h.seq),
      out.map((o) => o.row),
      host.token,
      host.channel,
      [...wake],
    );
    for (const o of out) host.adjustDepth(o.queue, 1);
    let done: boolean;
    try {
      // Not named: it looks rows up in messages (see prepared-statements).
      const { rows } = await host.query(text, values);
      done = rows[0].done === true;
    } catch (error) {
      for (const o of out) host.adjustDepth(o.queue, -1);
      for (const h of held) host.abandon(h);
      // The store's failure: the group is given back and runs again, never a task failure.
      throw unavailableError(error);
    }
    for (const h of held) host.held.drop(h);
    if (!done) {
      // Part of the group was claimed again elsewhere (this lease had ended): that run emits.
      for (const o of out) host.adjustDepth(o.queue, -1);
      return;
    }
    host.adjustDepth(queue, -held.length);
    for (const q of wake) host.notify(q);
  }
}

/** Refuses a rule the claim statement could not apply (the app checks the task's options first). */
export function checkGroupRule(rule: GroupRule): void {
  const where = "claimGroups";
  if (rule.kind !== "debounce" && rule.kind !== "batch") throw new TypeError(`${where}: rule.kind must be "debounce" or "batch", got ${JSON.stringify((rule as { kind: unknown }).kind)}`);
  if (!Number.isInteger(rule.maxSize) || rule.maxSize < 1 || rule.maxSize > MAX_INTEGER) {
    throw new TypeError(`${where}: rule.maxSize must be a whole number from 1 to ${MAX_INTEGER}, got ${String(rule.maxSize)}`);
  }
  if (rule.kind === "debounce" && !isDuration(rule.periodMs)) throw new TypeError(`${where}: rule.periodMs must be a finite number of milliseconds, 0 or more, got ${String(rule.periodMs)}`);
  const maxWaitRequired = rule.kind === "batch";
  if ((maxWaitRequired || rule.maxWaitMs !== undefined) && !isDuration(rule.maxWaitMs)) {
    throw new TypeError(`${where}: rule.maxWaitMs must be a finite number of milliseconds, 0 or more, got ${String(rule.maxWaitMs)}`);
  }
}

function isDuration(ms: unknown): ms is number {
  return typeof ms === "number" && Number.isFinite(ms) && ms >= 0;
}
