/**
 * The history's task index made cheaper to write. A GIN index on `tasks` wrote each event to its
 * pending list and rewrote the list's meta page (about 190 bytes of WAL and a tenth of the
 * history statement's WAL per request of the benchmark's main shape), then again when the list
 * was merged. Nearly every event has one task: a btree on the first task takes those (a
 * plain leaf insert), and the GIN index keeps only events with several tasks (fan-out), so the
 * task filter still starts from an index whatever the event's shape. The list's task filter
 * reads both (`tasks[1] = $task OR (cardinality(tasks) > 1 AND tasks @> ARRAY[$task])`).
 *
 * Built in the migration's transaction: on a large history the table's writes wait for it
 * (seconds for a million events).
 */
export const TASK_INDEX_MIGRATION = `
  DROP INDEX $schema.history_events_by_task;
  CREATE INDEX history_events_by_first_task ON $schema.history_events ((tasks[1]));
  CREATE INDEX history_events_by_tasks ON $schema.history_events USING gin (tasks) WHERE cardinality(tasks) > 1;
`;
