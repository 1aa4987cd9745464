/** YAML worker files: loading, `${ENV}` substitution, validation, and building the CoreApp. */
export { loadConfig, inspectConfig, type LoadedConfig, type LoadConfigOptions, type ConfigInspection } from "./load-config";
export { loadApp } from "./load-app";
export { buildApp } from "./build-app";
export { appOptionsOf } from "./app-options";
export { ConfigError, type ConfigIssue } from "./config-error";
export { AUTH_KINDS, type AuthKind } from "./auth-registry";
export type { Environment } from "./substitute-env";
export type { ResourceConfig } from "./validate-config";
export type { AppConfig, HttpConfig, StoreEngine } from "./schema/app-config";
export type { WebhookResourceConfig, ResponseConfig, DedupeConfig } from "./schema/webhook-resource-config";
export type { QueueResourceConfig } from "./schema/queue-resource-config";
export type { TaskConfig, HandlerConfig, RetryConfig } from "./schema/task-config";
export type { KeySegment } from "./key-path";
