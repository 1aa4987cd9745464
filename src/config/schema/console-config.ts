import { AnyValue, Integer, Optional, Section, Text } from "./rules";

/** `app.console.auth`: `{token}` or `{username, password}`, usually `${ENV}` values (checked together, types included, in check-console-auth.ts). */
export class ConsoleAuthConfig {
  @AnyValue() token?: string;
  @AnyValue() username?: string;
  @AnyValue() password?: string;
}

/** `app.console`: true, or where and how to serve the web console. */
export class ConsoleConfig {
  @Optional() @Text() host?: string;
  @Optional() @Integer(0, 65535) port?: number;
  @Optional() @Text(/^\/[^?#\s]*$/, 'a path beginning with "/" (no query, fragment or spaces)') path?: string;
  @Optional() @Section(() => ConsoleAuthConfig) auth?: ConsoleAuthConfig;
}
