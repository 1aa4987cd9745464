import { ListenError } from "../http/listener";
import { errorMessage } from "../util/logger";

/** One line on stderr (a stack too with WEBHOOK_TASKS_DEBUG set), then exit code 1. */
export function exitCannotStart(error: unknown): never {
  const message = errorMessage(error).split("\n").join(" ");
  // A clash between two listeners of this app is explained already (its cause is the first error).
  const elsewhere = error instanceof ListenError && error.code === "EADDRINUSE" && !(error.cause instanceof ListenError);
  const hint = elsewhere ? " (another process uses this port)" : "";
  process.stderr.write(`cannot start: ${message}${hint}\n`);
  if (process.env.WEBHOOK_TASKS_DEBUG && error instanceof Error && error.stack) process.stderr.write(`${error.stack}\n`);
  process.exit(1);
}
