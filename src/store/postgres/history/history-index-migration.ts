/**
 * The history's indexes made cheaper to write (the events' rows and the queries stay as they were).
 *
 * - Task: a GIN index on `tasks` wrote each event to its pending list and rewrote the list's
 *   meta page (about 190 bytes of WAL per request of the benchmark's main shape), then again
 *   when the list was merged. Nearly every event has one task: a btree on the first task takes
 *   those (a plain leaf insert), and the GIN index keeps only events with several tasks, so the
 *   task filter still starts from an index whatever the event's shape.
 * - Time and source: without the id, whose 36 bytes were most of each entry (about 200 bytes of
 *   WAL per request). Ties on the time are few (a millisecond's events): the list's order by
 *   (time, id) is an incremental sort of the index's order, and its cursor a range of it.
 *
 * Built in the migration's transaction: on a large history its reads and writes wait for it
 * (about half a second per 200,000 events).
 */
export const HISTORY_INDEX_MIGRATION = `
  DROP INDEX $schema.history_events_by_task;
  CREATE INDEX history_events_by_first_task ON $schema.history_events ((tasks[1]));
  CREATE INDEX history_events_by_tasks ON $schema.history_events USING gin (tasks) WHERE cardinality(tasks) > 1;
  DROP INDEX $schema.history_events_by_time;
  CREATE INDEX history_events_by_time ON $schema.history_events (received_at);
  DROP INDEX $schema.history_events_by_source;
  CREATE INDEX history_events_by_source ON $schema.history_events (source, received_at) WHERE source IS NOT NULL;
`;
