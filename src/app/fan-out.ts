import type { EmitRecord, QueuedMessage } from "../store/store";
import { computeOrderingKey, type OrderingKeyFn } from "./ordering-key";
import { runFilter, type Accepts } from "./task-filter";
import { handedOnForm } from "../store/payload-codec";
import type { TaskFlow } from "./flow/flow-options";
import { withFlowKeys } from "./flow/flow-keys";
import { withGroupKey, type TaskGroup } from "./flow/group-options";

/** What fan-out needs of a task that takes events from a source or a queue. */
export interface Subscriber {
  readonly name: string;
  /** Its physical queue in the store. */
  readonly queue: string;
  readonly accepts: Accepts | undefined;
  readonly orderingKey: OrderingKeyFn<never> | undefined;
  readonly flow?: TaskFlow | undefined;
  readonly group?: TaskGroup | undefined;
}

/**
 * One copy of `message` per subscriber whose filter takes it, each for the subscriber's own
 * queue with its own ordering key: what one store write (all or none) then stores. None when
 * no filter takes it. Throws FilterError or OrderingKeyError, before anything is stored.
 *
 * A lone subscriber's copy keeps the message's id (the event id of the `202`, as before
 * fan-out). With several, each copy's id is `<id>@<task>`: a task's retries, dead letter and
 * replay then concern its copy only, and ids stay unique in the dead letters.
 */
export function fanOut(subscribers: readonly Subscriber[], message: QueuedMessage): EmitRecord[] {
  const copies: EmitRecord[] = [];
  const several = subscribers.length > 1;
  for (const task of subscribers) {
    if (task.accepts !== undefined && !runFilter(task.accepts, message.payload, task.name)) continue;
    const orderingKey = task.orderingKey === undefined ? undefined : computeOrderingKey(task.orderingKey, message.payload, task.name);
    // A copy past the first gets a payload of its own: the memory store and the embedded
    // store's hand-off give a task the object stored, and a handler changing its event in
    // place (sorting a list, adding a field) would change the other tasks' copies. Plain data
    // (a parsed JSON event) is copied in one walk, anything else encoded and decoded.
    const payload = copies.length === 0 ? message.payload : handedOnForm(message.payload, "payload");
    let copy = several ? { ...message, id: copyId(message.id, task.name), payload } : message;
    if (orderingKey !== undefined) copy = { ...copy, orderingKey };
    if (task.flow !== undefined) copy = withFlowKeys(task.flow, copy, message.payload, task.name);
    if (task.group !== undefined) copy = withGroupKey(task.group, copy, message.payload, task.name);
    copies.push({ queue: task.queue, message: copy });
  }
  return copies;
}

/** The id of `task`'s copy of an event fanned out to several tasks. */
export function copyId(id: string, task: string): string {
  return `${id}@${task}`;
}

/** The event id a task's copy was made from: `<id>@<task>` gives `<id>`; a lone task's copy is the event's id. */
export function eventIdOfCopy(messageId: string, task: string): string {
  const suffix = task.length + 1;
  return messageId.length > suffix && messageId.endsWith(task) && messageId.charCodeAt(messageId.length - suffix) === 64 ? messageId.slice(0, -suffix) : messageId;
}
