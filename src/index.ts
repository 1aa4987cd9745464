import "reflect-metadata";

export { CoreApp, DEFAULT_STORE, type AppStoreSettings, type CoreAppOptions } from "./app/core-app";
export type { TaskOptions, TaskHandler, TaskSource, TaskEmit, TaskResult, EventOf } from "./app/task";
export type { EmittableResult, Frozen, ResultCheckedHandler } from "./app/handler-result";
export { Queue } from "./app/queue";
export { OrderingKeyError, MAX_ORDERING_KEY_BYTES } from "./app/ordering-key";
export { FilterError } from "./app/task-filter";
export type { TaskContext } from "./app/task-context";
export type { ConcurrencyLimit, RateLimit } from "./app/flow/flow-options";
export type { DebounceOptions, BatchOptions } from "./app/flow/group-options";
export type { EmitOptions } from "./app/flow/run-emits";
export { DEFAULT_RETRY, type RetryPolicy } from "./app/retry-policy";
export { createDefaultLogger, silentLogger, LOG_LEVELS, REDACT_PATHS, SECRET_HEADERS, type Logger, type LogFn, type LogLevel, type LogFields } from "./util/logger";
export { PermanentError } from "./app/permanent-error";
export { TaskTimeoutError, DEFAULT_TASK_TIMEOUT_MS } from "./app/task-timeout";
export type { AppEventMap, AppEventName, AppEventListener, DeadLetterEventPayload, RetryEventPayload } from "./app/app-events";
export type { AppStatus, QueueStatus, TaskStatus } from "./app/app-status";
export type { EventsApi, ReplayFilter, ReplayOptions, BulkReplayOptions, ReplayResult, BulkReplayResult } from "./app/events-api";
export { ReplayError, ReplayStoppedError } from "./app/event-history";
export { DEFAULT_HISTORY_RETAIN_MS, type HistoryOptions } from "./app/history-options";
export type { MetricsOptions, ObservabilityOptions } from "./observe/app-observability";
export type { ConsoleOptions, ConsoleAuth, ConsoleTokenAuth, ConsoleBasicAuth } from "./console/console-options";
export { ConsolePlacementError } from "./console/mount-console";
export type { HealthOptions, Readiness, HealthCheck } from "./observe/health";

export { Task, type TaskMethod, type TaskMethodDecorator } from "./decorators/task.decorator";
export { Module, type ModuleClassDecorator, type ModuleOptions, type HandlerClass } from "./decorators/module.decorator";
export { bootstrap, createApp } from "./decorators/bootstrap";

export type { Source, Inbox, RoutedEvent, SourceRuntime, DeliveryOutcome, OutcomeWait } from "./sources/source";
export { WebhookSource, type ResolvedWebhookOptions } from "./sources/webhook/webhook-source";
export { HTTP_METHODS, type WebhookSourceOptions, type AckMode, type HttpMethod } from "./sources/webhook/webhook-options";
export type { WebhookEvent, ParserMode } from "./sources/webhook/webhook-event";
export type { EventNamer } from "./sources/webhook/event-names/event-namer";
export { eventNameFrom, type EventNameField } from "./sources/webhook/event-names/event-name-from";
export type { GitHubEvent, StripeEvent, SenderEvent, SenderPayloads, GitHubPayloads, StripePayloads, TypedSender, EventPatternOf, EventSelector } from "./sources/webhook/event-names/event-types";
export { WebhookResponse, type WebhookResponseInit, type JsonValue } from "./sources/webhook/webhook-response";
export { WebhookError } from "./sources/webhook/webhook-error";
export { BearerAuth } from "./sources/webhook/bearer-auth";
export type { WebhookAuth, AuthRequest, AuthFailure } from "./sources/webhook/auth";
export { constantTimeEqual } from "./sources/webhook/constant-time";
export type { DedupeOptions, DedupePreset } from "./sources/webhook/dedupe";
export * from "./sources/webhook/verifiers/index";

export { ListenError, type ListenerTimeouts } from "./http/listener";
export type { TrustProxy } from "./http/trust-proxy";

export * from "./store/index";

export * from "./config/index";
