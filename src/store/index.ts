/** The store layer's public surface; src/index.ts re-exports from here. */
export type {
  ClaimFlow,
  ClaimedGroups,
  DeadLetter,
  DeadLetterStore,
  EmitRecord,
  GroupRule,
  QueuedMessage,
  StateSetOptions,
  StateStore,
  Store,
  StoreCloseOptions,
  StoreRefusal,
} from "./store";
export type {
  ActivityRow,
  DeliveryNote,
  DeliveryStatus,
  EventStatus,
  DeliveryView,
  EventNote,
  EventOrigin,
  EventSummary,
  HistoryEvent,
  HistoryPage,
  HistoryQuery,
  HistoryRetention,
  HistoryStore,
  PauseStore,
  RunError,
  RunNote,
  RunOutcome,
  RunRecord,
} from "./history";
export { DELIVERY_STATUSES, EVENT_STATUSES } from "./history";
export { HistoryQueryError } from "./history-query";
export { DEFAULT_MEMORY_HISTORY_EVENTS } from "./memory/memory-history";
export { StoreRefusedError, toRefusal } from "./store-errors";
export { DEFAULT_EMBEDDED_LIMITS, DEFAULT_MEMORY_LIMITS, type StoreLimits } from "./store-limits";
export { MemoryStore, type MemoryStoreOptions } from "./memory/memory-store";
export { EmbeddedStore, type EmbeddedStoreOptions } from "./embedded/embedded-store";
export { StoreOpenError } from "./embedded/store-open-error";
export { PostgresStore } from "./postgres/postgres-store";
export {
  DEFAULT_POSTGRES_SCHEMA,
  type PostgresStoreOptions,
  type PostgresUrl,
  type PostgresPool,
  type PostgresPoolClient,
  type PostgresQuery,
  type PostgresQueryResult,
} from "./postgres/postgres-options";
export { createStore, defaultDataDir, DATA_DIR_ENV, STORE_ENV, type CreateStoreOptions, type StoreSpec } from "./create-store";
export { storedForm, UnstorableValueError } from "./payload-codec";
