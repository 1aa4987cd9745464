/** reflect-metadata keys; symbols so they cannot clash with other libraries' metadata. */
export const TASKS_METADATA = Symbol.for("webhook-tasks:tasks");
export const MODULE_METADATA = Symbol.for("webhook-tasks:module");
