import type { ClaimedGroups, GroupRule, QueuedMessage } from "./store";

/** One group a claim may hand out: a key's messages (oldest first) and when they are due. */
interface Candidate {
  readonly messages: QueuedMessage[];
  readonly dueAt: number;
}

/**
 * Which groups of a queue's visible messages are due (GroupRule), for engines that decide in
 * their own process (memory, embedded): up to `limit` of them, in the order of their oldest
 * message. `visible` are the messages neither claimed nor delayed; `busy` the group keys with a
 * claimed message (a debounced key runs one group at a time). A message without a group key
 * (queued before the task was debounced or batched) counts as the task's group "", so that it
 * is not stranded. Nothing is claimed here: the engine claims what comes back.
 */
export function pickGroups(visible: Iterable<QueuedMessage>, busy: ReadonlySet<string>, rule: GroupRule, limit: number, now: number): ClaimedGroups {
  const byKey = new Map<string, QueuedMessage[]>();
  for (const message of visible) {
    const key = message.groupKey ?? "";
    const list = byKey.get(key);
    if (list === undefined) byKey.set(key, [message]);
    else list.push(message);
  }
  const candidates: Candidate[] = [];
  let collecting = 0;
  for (const [key, list] of byKey) {
    // Oldest first by arrival; stable, so messages of one millisecond keep their queue order.
    list.sort((a, b) => a.enqueuedAt - b.enqueuedAt);
    if (rule.kind === "debounce") {
      if (busy.has(key)) {
        // Waits for the key's run to end; that run's end wakes the claimer.
        collecting += list.length;
        continue;
      }
      const newest = list[list.length - 1].enqueuedAt;
      let dueAt = newest + rule.periodMs;
      if (rule.maxWaitMs !== undefined) dueAt = Math.min(dueAt, list[0].enqueuedAt + rule.maxWaitMs);
      if (list.length >= rule.maxSize) dueAt = Math.min(dueAt, now);
      candidates.push({ messages: list.length > rule.maxSize ? list.slice(0, rule.maxSize) : list, dueAt });
      // Past maxSize the rest waits for the key's run to end.
      collecting += Math.max(0, list.length - rule.maxSize);
      continue;
    }
    for (let start = 0; start < list.length; start += rule.maxSize) {
      const messages = list.slice(start, start + rule.maxSize);
      const dueAt = messages.length >= rule.maxSize ? now : messages[0].enqueuedAt + rule.maxWaitMs;
      candidates.push({ messages, dueAt });
    }
  }
  const due = candidates.filter((c) => c.dueAt <= now).sort((a, b) => a.messages[0].enqueuedAt - b.messages[0].enqueuedAt);
  const groups = due.slice(0, Math.max(0, limit)).map((c) => c.messages);
  let nextDueAt: number | undefined;
  const handed = new Set(groups);
  for (const candidate of candidates) {
    if (handed.has(candidate.messages)) continue;
    collecting += candidate.messages.length;
    if (nextDueAt === undefined || candidate.dueAt < nextDueAt) nextDueAt = candidate.dueAt;
  }
  return nextDueAt === undefined ? { groups, collecting } : { groups, nextDueAt, collecting };
}
