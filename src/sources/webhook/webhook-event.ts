/** The event a webhook task receives: the seed's shape, field names kept (`received_at`). */
export interface WebhookEvent<B = unknown> {
  /** Parsed per the source's parser mode. */
  body: B;
  /** Request headers, names in lower case. */
  headers: Record<string, string>;
  /** Query-string parameters; a repeated key gives an array. */
  query: Record<string, string | string[]>;
  /** Upper case. */
  method: string;
  /** Without the query string. */
  path: string;
  /** The caller; behind a trusted proxy, the original client. Port 0 when a proxy does not tell it. */
  client: [host: string, port: number];
  /** Seconds since the epoch, with fraction. */
  received_at: number;
  /**
   * The sender's name for the event ("pull_request.opened", "invoice.paid"), set when it is
   * received, from the source's verifier or its `eventName` option; absent when neither names it.
   */
  name?: string;
}

export type ParserMode = "json" | "form" | "text" | "raw" | "auto";
export const PARSER_MODES: readonly ParserMode[] = ["json", "form", "text", "raw", "auto"];
