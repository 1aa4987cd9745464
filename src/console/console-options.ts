
/** `auth.token`: sent as `Authorization: Bearer <token>`, or typed once into the login page. */
export interface ConsoleTokenAuth {
  readonly token: string;
}

/** HTTP basic authentication. */
export interface ConsoleBasicAuth {
  readonly username: string;
  readonly password: string;
}

export type ConsoleAuth = ConsoleTokenAuth | ConsoleBasicAuth;

/** `console: true` or where and how to serve the web console. */
export interface ConsoleOptions {
  /** Default "127.0.0.1". Any other than a loopback address needs `auth`. */
  readonly host?: string;
  /** Default 9400. A webhook source's port only when named here (the console then shares its listener under `path`). */
  readonly port?: number;
  /** Where the console's pages start (default "/"). */
  readonly path?: string;
  readonly auth?: ConsoleAuth;
}

export const DEFAULT_CONSOLE_HOST = "127.0.0.1";
export const DEFAULT_CONSOLE_PORT = 9400;
export const MIN_TOKEN_LENGTH = 16;
export const MIN_PASSWORD_LENGTH = 12;
/**
 * A token with a space or a line break (one read from a file often ends in one) could never
 * sign in: an `Authorization: Bearer` header cannot carry it, and a browser drops line breaks
 * from what is typed into the sign-in page.
 */
export const TOKEN_BLANKS = /[\s\x00-\x1f\x7f]/;
export const TOKEN_BLANKS_PROBLEM = "must not hold spaces, line breaks or control characters (a Bearer header cannot carry them; a token read from a file may end in a line break)";

/** The console's settings with defaults applied, and whether host and port were named. */
export interface ResolvedConsoleOptions {
  readonly host: string;
  readonly port: number;
  /** "/" or a path without a trailing slash ("/console"). */
  readonly path: string;
  readonly auth: ConsoleAuth | undefined;
  /** The user named the host and port (sharing a webhook source's listener is allowed only then). */
  readonly placed: boolean;
}

/** `console` as given to CoreApp: checked once, when the app is made; undefined when off. */
export function resolveConsoleOptions(value: boolean | ConsoleOptions | undefined): ResolvedConsoleOptions | undefined {
  if (value === undefined || value === false) return undefined;
  if (value === true) return { host: DEFAULT_CONSOLE_HOST, port: DEFAULT_CONSOLE_PORT, path: "/", auth: undefined, placed: false };
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new TypeError("console must be true, false or { host, port, path, auth }");
  const known = ["host", "port", "path", "auth"];
  const unknown = Object.keys(value).find((key) => !known.includes(key));
  if (unknown !== undefined) throw new TypeError(`console.${unknown} is not an option of the console (it takes ${known.join(", ")})`);
  const { host, port, path, auth } = value;
  if (host !== undefined && (typeof host !== "string" || host === "")) throw new TypeError("console.host must be a non-empty string");
  if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65535)) throw new TypeError(`console.port must be an integer from 0 to 65535, got ${String(port)}`);
  if (path !== undefined && (typeof path !== "string" || !/^\/[^?#\s]*$/.test(path))) {
    throw new TypeError('console.path must be a path beginning with "/", without query, fragment or spaces');
  }
  return {
    host: host ?? DEFAULT_CONSOLE_HOST,
    port: port ?? DEFAULT_CONSOLE_PORT,
    path: path === undefined || path === "/" ? "/" : path.replace(/\/+$/, ""),
    auth: auth === undefined ? undefined : checkAuth(auth),
    placed: host !== undefined && port !== undefined,
  };
}

function checkAuth(auth: unknown): ConsoleAuth {
  if (typeof auth !== "object" || auth === null || Array.isArray(auth)) throw new TypeError("console.auth must be { token } or { username, password }");
  const keys = Object.keys(auth);
  const a = auth as Record<string, unknown>;
  if ("token" in a) {
    if (keys.length !== 1) throw new TypeError("console.auth takes either { token } or { username, password }, not both");
    if (typeof a.token !== "string" || a.token.length < MIN_TOKEN_LENGTH) {
      throw new TypeError(`console.auth.token must be a string of at least ${MIN_TOKEN_LENGTH} characters (for example from \`openssl rand -hex 32\`)`);
    }
    if (TOKEN_BLANKS.test(a.token)) throw new TypeError(`console.auth.token ${TOKEN_BLANKS_PROBLEM}`);
    return { token: a.token };
  }
  if ("username" in a || "password" in a) {
    const extra = keys.find((key) => key !== "username" && key !== "password");
    if (extra !== undefined) throw new TypeError(`console.auth.${extra} is not an option of basic authentication (it takes username, password)`);
    if (typeof a.username !== "string" || a.username === "" || a.username.includes(":")) throw new TypeError("console.auth.username must be a non-empty string without ':'");
    if (typeof a.password !== "string" || a.password.length < MIN_PASSWORD_LENGTH) throw new TypeError(`console.auth.password must be a string of at least ${MIN_PASSWORD_LENGTH} characters`);
    return { username: a.username, password: a.password };
  }
  throw new TypeError("console.auth must be { token } or { username, password }");
}
