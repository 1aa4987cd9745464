import { CONSOLE_TOKEN } from "./shop-app";

export interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
}

/** A console client: real HTTP, no redirects followed, the session cookie kept once signed in. */
export class ConsoleClient {
  cookie: string | undefined;

  /** `bearer`: sent as `Authorization: Bearer` with every request (a script's way in). */
  constructor(
    readonly base: string,
    private readonly bearer?: string,
  ) {}

  get origin(): string {
    return new URL(this.base).origin;
  }

  url(path: string): string {
    return new URL(path.replace(/^\//, ""), this.base).toString();
  }

  async request(path: string, init: { method?: string; headers?: Record<string, string>; form?: Record<string, string | string[]> } = {}): Promise<Answer> {
    const headers: Record<string, string> = {
      ...(this.cookie === undefined ? {} : { cookie: this.cookie }),
      ...(this.bearer === undefined ? {} : { authorization: `Bearer ${this.bearer}` }),
      ...init.headers,
    };
    let body: string | undefined;
    if (init.form !== undefined) {
      const params = new URLSearchParams();
      for (const [k, v] of Object.entries(init.form)) for (const item of Array.isArray(v) ? v : [v]) params.append(k, item);
      body = params.toString();
      headers["content-type"] = "application/x-www-form-urlencoded";
    }
    const res = await fetch(this.url(path), { method: init.method ?? (body === undefined ? "GET" : "POST"), headers, body, redirect: "manual" });
    return { status: res.status, headers: res.headers, text: await res.text() };
  }

  /** A POST as the console's own page sends it: same origin, with the page's CSRF token. */
  async post(path: string, form: Record<string, string | string[]> = {}, csrf?: string): Promise<Answer> {
    const token = csrf ?? (await this.csrf());
    return this.request(path, { form: { _csrf: token, ...form }, headers: { origin: this.origin, "sec-fetch-site": "same-origin" } });
  }

  async csrf(page = "/"): Promise<string> {
    const answer = await this.request(page);
    const match = /name="_csrf" value="([^"]+)"/.exec(answer.text);
    if (match === null) throw new Error(`no CSRF token on ${page} (${answer.status})`);
    return match[1];
  }

  async signIn(token = CONSOLE_TOKEN): Promise<Answer> {
    const answer = await this.request("/login", { form: { token, next: new URL(this.base).pathname }, headers: { origin: this.origin, "sec-fetch-site": "same-origin" } });
    const set = answer.headers.get("set-cookie");
    if (answer.status === 303 && set !== null) this.cookie = set.split(";")[0];
    return answer;
  }
}
