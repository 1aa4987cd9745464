import { readFileSync } from "node:fs";
import { didYouMean } from "../util/did-you-mean";
import { signRequest, SIGN_PRESETS, type SignPreset } from "../testing/sign-request";
import { sendHttp, SendFailure, type SentAnswer } from "./http-send";
import type { Output } from "./output";
import { UsageError } from "./usage";
import { parseCommandArgs } from "./command-args";

/**
 * `send <url> [--preset p --secret-env VAR] (--file f | --data text) [--header k:v] [--method M]`:
 * signs a delivery as the sender would and sends it to a running app, for local development.
 * Prints the answer (status line, headers, body); exit code 0 for a 2xx answer, 1 otherwise.
 */
export async function sendCommand(args: readonly string[], output: Output): Promise<number> {
  const { values, positionals } = parseCommandArgs("send", args, {
    preset: { type: "string" },
    "secret-env": { type: "string" },
    file: { type: "string" },
    data: { type: "string" },
    header: { type: "string", multiple: true },
    method: { type: "string" },
  });
  if (positionals.length !== 1) throw new UsageError("send takes one argument: the URL of the webhook");
  const url = parseUrl(positionals[0]);
  if (values.file !== undefined && values.data !== undefined) throw new UsageError("send: give --file or --data, not both");
  // curl reads `-d @push.json` from the file; sent as text, it would be signed and accepted, then fail in the task.
  if (values.data?.startsWith("@")) throw new UsageError(`send: --data ${JSON.stringify(values.data)} is sent as it is written, not read from a file: give --file ${values.data.slice(1) || "<payload>"} for a file's content (a body that begins with @ goes in a file too)`);
  const preset = values.preset === undefined ? undefined : presetOf(values.preset);
  if (preset !== undefined && values["secret-env"] === undefined) throw new UsageError(`send: --preset ${preset} needs --secret-env <VAR>, the environment variable holding the secret`);
  if (preset === undefined && values["secret-env"] !== undefined) throw new UsageError("send: --secret-env is only used with --preset");

  const body = values.file !== undefined ? readBody(values.file) : Buffer.from(values.data ?? "", "utf8");
  const headers: Record<string, string> = { "content-type": contentTypeOf(body) };
  if (preset !== undefined) {
    const variable = values["secret-env"]!;
    const secret = process.env[variable];
    if (secret === undefined || secret === "") throw new Error(`send: the environment variable ${variable} is not set (it should hold the ${preset} secret)`);
    Object.assign(headers, signRequest(preset, { secret, body, url: url.href }));
  }
  for (const header of values.header ?? []) {
    const colon = header.indexOf(":");
    if (colon <= 0) throw new UsageError(`send: --header ${JSON.stringify(header)} is not name:value`);
    headers[header.slice(0, colon).trim().toLowerCase()] = header.slice(colon + 1).trim();
  }

  const method = (values.method ?? "POST").toUpperCase();
  if ((method === "GET" || method === "HEAD") && body.length > 0) throw new UsageError(`send: a ${method} request carries no body; drop --file/--data or give another --method`);
  let answer: SentAnswer;
  try {
    answer = await sendHttp(url, method, headers, body);
  } catch (error) {
    if (error instanceof SendFailure) throw new Error(`send: cannot reach ${url.href}: ${error.reason} (${failureHint(error.reason, url)})`);
    // node refuses a method or header it cannot send (a space in the method, a newline in a value).
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ERR_INVALID_HTTP_TOKEN" || code === "ERR_INVALID_CHAR" || code === "ERR_HTTP_INVALID_HEADER_VALUE") throw new UsageError(`send: ${(error as Error).message}`);
    throw error;
  }
  output.out(`HTTP ${answer.status} ${answer.statusText}`);
  for (const [name, value] of answer.headers) output.out(`${name}: ${value}`);
  output.out("");
  if (answer.body.length > 0) output.out(answer.body);
  return answer.status >= 200 && answer.status < 300 ? 0 : 1;
}

function parseUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UsageError(`send: ${JSON.stringify(text)} is not a URL (for example http://127.0.0.1:8080/hooks/github)`);
  }
  // `localhost:8080/hooks` parses with the scheme "localhost:": name the URL the user meant.
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new UsageError(`send: the URL must be http:// or https://, got ${text.includes("://") ? url.protocol : `${JSON.stringify(text)} (did you mean http://${text}?)`}`);
  return url;
}

/** Certificate codes node's TLS gives when the server answered but its certificate is not trusted. */
const UNTRUSTED_CERTIFICATE = /^(DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT(_LOCALLY)?|CERT_HAS_EXPIRED|CERT_NOT_YET_VALID|ERR_TLS_CERT_ALTNAME_INVALID)$/;

/** "is the app running?" misleads when something did answer, over TLS or not. */
function failureHint(reason: string, url: URL): string {
  if (UNTRUSTED_CERTIFICATE.test(reason)) return "something answered, but its TLS certificate is not trusted: NODE_EXTRA_CA_CERTS=<CA file> trusts it, or send to the app's own http:// address";
  if (url.protocol === "https:" && (reason === "EPROTO" || reason === "ERR_SSL_WRONG_VERSION_NUMBER")) return `something answered, but not over TLS: is it http://${url.host}${url.pathname}${url.search}?`;
  return "is the app running?";
}

function presetOf(name: string): SignPreset {
  if (name === "hmac") throw new UsageError("send: the hmac preset needs its options (header, prefix, signed payload); sign with signRequest from webhook-tasks/testing in code");
  if ((SIGN_PRESETS as readonly string[]).includes(name)) return name as SignPreset;
  const guess = didYouMean(name, SIGN_PRESETS);
  throw new UsageError(`send: unknown preset "${name}"${guess ? ` (did you mean "${guess}"?)` : ""}; presets: ${SIGN_PRESETS.filter((p) => p !== "hmac").join(", ")}`);
}

function readBody(file: string): Buffer {
  try {
    return readFileSync(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new Error(`send: cannot read ${file}: ${code === "ENOENT" ? "no such file" : code === "EISDIR" ? "it is a directory" : (error as Error).message}`);
  }
}

/** JSON when the body parses as JSON, a form when it looks like one, else text. */
function contentTypeOf(body: Buffer): string {
  const text = body.toString("utf8");
  try {
    JSON.parse(text);
    return "application/json";
  } catch {
    return /^[\w.%+-]+=[^&]*(&[\w.%+-]+=[^&]*)*$/.test(text.trim()) ? "application/x-www-form-urlencoded" : "text/plain; charset=utf-8";
  }
}
