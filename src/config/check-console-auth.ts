import { MIN_PASSWORD_LENGTH, MIN_TOKEN_LENGTH, TOKEN_BLANKS, TOKEN_BLANKS_PROBLEM } from "../console/console-options";
import type { IssueList } from "./issue-list";
import type { KeySegment } from "./key-path";
import { isMapping } from "./schema/rules";

/**
 * `app.console.auth` as a whole: a token, or a user name with a password, never both, each a
 * string long enough. An empty value is what `${VAR}` gives for a variable set to nothing.
 */
export function checkConsoleAuth(auth: unknown, path: readonly KeySegment[], issues: IssueList): void {
  if (!isMapping(auth)) return;
  const has = (key: string) => auth[key] !== undefined;
  const check = (key: string, extra: (value: string) => string | undefined): void => {
    const value = auth[key];
    const problem =
      value === undefined
        ? `is required with ${key === "username" ? "password" : "username"}`
        : typeof value !== "string"
          ? "must be a string (quote it, or use ${ENV_VAR} to keep it out of the file)"
          : value === ""
            ? "is empty: is the environment variable that should hold it set to nothing?"
            : extra(value);
    if (problem !== undefined) issues.add([...path, key], problem);
  };
  if (has("token") && (has("username") || has("password"))) {
    issues.add([...path], "takes either token or username and password, not both");
  } else if (has("token")) {
    check("token", (token) =>
      token.length < MIN_TOKEN_LENGTH ? `must be at least ${MIN_TOKEN_LENGTH} characters long (for example from \`openssl rand -hex 32\`)` : TOKEN_BLANKS.test(token) ? TOKEN_BLANKS_PROBLEM : undefined,
    );
  } else if (has("username") || has("password")) {
    check("username", (name) => (name.includes(":") ? "must not contain ':' (basic authentication cannot carry it)" : undefined));
    check("password", (password) => (password.length < MIN_PASSWORD_LENGTH ? `must be at least ${MIN_PASSWORD_LENGTH} characters long` : undefined));
  } else {
    issues.add([...path], "needs token (`token: ${CONSOLE_TOKEN}`) or username and password");
  }
}
