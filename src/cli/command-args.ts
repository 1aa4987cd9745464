import { parseArgs, type ParseArgsConfig } from "node:util";
import { didYouMean } from "../util/did-you-mean";
import { UsageError } from "./usage";

type Options = NonNullable<ParseArgsConfig["options"]>;

/**
 * node's parseArgs (strict, positionals allowed) for one command, with an unknown option
 * refused the way an unknown command is: named, with the closest option and the command's
 * options, instead of node's text about positionals starting with "-".
 */
export function parseCommandArgs<T extends Options>(command: string, args: readonly string[], options: T): ReturnType<typeof parseArgs<{ args: string[]; options: T; allowPositionals: true; strict: true }>> {
  try {
    return parseArgs({ args: [...args], options, allowPositionals: true, strict: true });
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    const unknown = /Unknown option '([^']*)'/.exec((error as Error).message)?.[1];
    if (code !== "ERR_PARSE_ARGS_UNKNOWN_OPTION" || unknown === undefined) throw error;
    throw new UsageError(unknownOptionMessage(command, unknown, Object.keys(options)));
  }
}

/** `unknown option "--presett" for send (did you mean "--preset"?); its options: --preset, ...`. */
export function unknownOptionMessage(command: string, option: string, names: readonly string[]): string {
  const known = [...names.map((n) => `--${n}`), "--help"];
  const guess = didYouMean(option.startsWith("--") ? option : `-${option}`, known);
  return `unknown option "${option}" for ${command}${guess ? ` (did you mean "${guess}"?)` : ""}; its options: ${known.join(", ")}`;
}
