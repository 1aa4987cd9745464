import { parse as parseQueryString } from "node:querystring";
import { TextDecoder } from "node:util";

const BAD_PERCENT = /%(?![0-9A-Fa-f]{2})/;
const ESCAPED_RUN = /(?:%[0-9A-Fa-f]{2})+/g;

/** Why a form body was refused (the caller makes it a 400 `invalid_form`). */
export type FormProblem = "bad_escape" | "escape_not_in_charset";

/**
 * Parses an application/x-www-form-urlencoded body already decoded from `charset`. Its
 * percent-escapes are bytes in that same charset (as browsers send them) and are decoded with
 * it; bytes that are not valid in it are refused rather than turned into U+FFFD, which
 * `querystring` does silently. No cap on the number of fields (querystring's default keeps the
 * first 1000 and drops the rest): maxBodyBytes bounds it.
 */
export function parseForm(text: string, charset: string): Record<string, string | string[]> | FormProblem {
  if (BAD_PERCENT.test(text)) return "bad_escape";
  const decoder = new TextDecoder(charset, { fatal: true });
  let invalid = false;
  const decodeURIComponent = (part: string): string => {
    if (!part.includes("%")) return part;
    return part.replace(ESCAPED_RUN, (run) => {
      try {
        return decoder.decode(Buffer.from(run.replaceAll("%", ""), "hex"));
      } catch {
        // querystring catches what its decoder throws and falls back to the lossy decoding.
        invalid = true;
        return run;
      }
    });
  };
  const fields = { ...parseQueryString(text, undefined, undefined, { maxKeys: 0, decodeURIComponent }) } as Record<string, string | string[]>;
  return invalid ? "escape_not_in_charset" : fields;
}
