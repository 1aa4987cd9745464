#!/usr/bin/env node
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { processOutput, type Output } from "./output";
import { reportError } from "./report-error";
import { didYouMean } from "../util/did-you-mean";
import { errorMessage } from "../util/logger";
import { USAGE, UsageError } from "./usage";

const COMMANDS = ["run", "check", "events", "dead-letters", "status", "send"];
// Each command's module is loaded when it runs: `--help`, a typo or `send` need none of the
// stores, the app framework or their dependencies, which take most of a start's time.

/** What `main` ended with: an exit code, or "running" when `run` started an app that now owns the process. */
export type MainResult = number | "running";

/**
 * The `webhook-tasks` command line. Returns the exit code (0 success, 1 failure, 2 usage);
 * errors are printed one line per problem on stderr, without stack traces.
 */
export async function main(argv: readonly string[], output: Output = processOutput): Promise<MainResult> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case undefined:
        output.err(USAGE);
        return 2;
      case "-h":
      case "--help":
      case "help":
        output.out(USAGE);
        return 0;
      case "-v":
      case "--version":
        output.out(version());
        return 0;
      case "run":
        if (wantsHelp(rest)) return help(output);
        await (await import("./run-command.js")).runCommand(rest);
        return "running";
      case "check":
        if (wantsHelp(rest)) return help(output);
        return await (await import("./check-command.js")).checkCommand(rest, output);
      case "events":
        if (wantsHelp(rest)) return help(output);
        return await (await import("./events-command.js")).eventsCommand(rest, output);
      case "dead-letters":
        if (wantsHelp(rest)) return help(output);
        return await (await import("./dead-letters-command.js")).deadLettersCommand(rest, output);
      case "status":
        if (wantsHelp(rest)) return help(output);
        return await (await import("./status-command.js")).statusCommand(rest, output);
      case "send":
        if (wantsHelp(rest)) return help(output);
        return await (await import("./send-command.js")).sendCommand(rest, output);
      default: {
        const guess = didYouMean(command, COMMANDS);
        throw new UsageError(`unknown command "${command}"${guess ? ` (did you mean "${guess}"?)` : ""}; commands: ${COMMANDS.join(", ")}`);
      }
    }
  } catch (error) {
    return reportError(usageFromParseArgs(error), output);
  }
}

function wantsHelp(args: readonly string[]): boolean {
  return args.includes("--help") || args.includes("-h");
}

function help(output: Output): number {
  output.out(USAGE);
  return 0;
}

/** node:util parseArgs throws TypeErrors with ERR_PARSE_ARGS_* codes for bad options. */
function usageFromParseArgs(error: unknown): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === "string" && code.startsWith("ERR_PARSE_ARGS_")) return new UsageError((error as Error).message);
  return error;
}

function version(): string {
  try {
    const pkg = JSON.parse(readFileSync(join(__dirname, "../../../package.json"), "utf8")) as { version?: string };
    return pkg.version ?? "unknown";
  } catch {
    return "unknown";
  }
}

/** Exits once stdout and stderr are flushed (a pipe may still hold output otherwise). */
function exitAfterFlush(code: number): void {
  process.exitCode = code;
  process.stdout.write("", () => process.stderr.write("", () => process.exit(code)));
}

if (require.main === module) {
  // `webhook-tasks events list | head`: the reader left. What it skipped is lost either way; the
  // command still finishes what it does (a replay half queued is worse) and exits as it would.
  process.stdout.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code !== "EPIPE") throw error;
  });
  // A handler module that rejects a promise nobody awaits, while it is imported: one line, as
  // for any other failure, not Node's stack. Once an app runs, its process keeps Node's default.
  const onRejection = (error: unknown) => {
    const reported = new Error(`unhandled promise rejection: ${errorMessage(error)}`);
    if (error instanceof Error && error.stack) reported.stack = error.stack; // WEBHOOK_TASKS_DEBUG shows where it came from
    exitAfterFlush(reportError(reported, processOutput));
  };
  process.on("unhandledRejection", onRejection);
  void main(process.argv.slice(2)).then((result) => {
    if (result !== "running") exitAfterFlush(result);
    else process.off("unhandledRejection", onRejection);
  });
}
