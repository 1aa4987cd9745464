import { expect } from "chai";
import { CoreApp, silentLogger, WebhookSource } from "../../src/index";
import { RUN_OUTCOMES } from "../../src/store/postgres/history/history-tables";
import { DELIVERY_STATUSES } from "../../src/store/history";
import { ConsoleClient } from "./console-client";
import { CONSOLE_TOKEN, eventually } from "./shop-app";

/** The stylesheet's declarations for one class selector (empty when no rule names it). */
function rulesFor(css: string, className: string): string {
  const found: string[] = [];
  for (const match of css.replace(/\/\*[\s\S]*?\*\//g, "").matchAll(/([^{}]+)\{([^}]*)\}/g)) {
    const selectors = match[1].split(",").map((s) => s.trim());
    if (selectors.includes(`.${className}`)) found.push(match[2]);
  }
  return found.join(";");
}

describe("console: status badges", function () {
  this.timeout(20_000);
  let app: CoreApp;

  afterEach(async () => {
    await app.stop({ timeoutMs: 2_000 });
  });

  it("styles every run outcome and delivery status, superseded too: a debounced burst's older event shows its badge", async () => {
    const source = new WebhookSource({ path: "/hooks", host: "127.0.0.1", port: 0 });
    app = new CoreApp("badges", { store: "memory", logger: silentLogger, console: { port: 0, auth: { token: CONSOLE_TOKEN } } });
    app.task({ source, name: "reindex", debounce: { periodMs: 300, key: () => "one" } }, async () => undefined);
    await app.start();
    const ids: string[] = [];
    for (const n of [1, 2, 3]) {
      const res = await fetch(source.url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ n }) });
      ids.push(((await res.json()) as { id: string }).id);
    }
    const older = await eventually(async () => {
      const event = await app.events.get(ids[0]);
      return event?.runs.some((r) => r.outcome === "superseded") === true ? event : undefined;
    }, 5_000, "the oldest event to be superseded");
    expect(older.runs.map((r) => r.outcome)).to.deep.equal(["superseded"]);

    const client = new ConsoleClient(app.consoleUrl ?? "", CONSOLE_TOKEN);
    const page = await client.request(`/events/${ids[0]}`);
    expect(page.status).to.equal(200);
    expect(page.text).to.match(/<span class="badge badge-superseded">superseded<\/span>/);
    const href = /<link rel="stylesheet" href="([^"]+)">/.exec(page.text)?.[1];
    expect(href).to.be.a("string");
    const css = await (await fetch(new URL(href!, client.base))).text();
    // Each word the pages badge has colours of its own, not the grey of a badge without a rule
    // (pending and unrouted are that grey on purpose: nothing has happened to them yet).
    for (const word of [...RUN_OUTCOMES, ...DELIVERY_STATUSES.filter((s) => s !== "pending")]) {
      const rules = rulesFor(css, `badge-${word}`);
      expect(rules, word).to.match(/background:\s*var\(--[a-z]+-bg\)/).and.match(/(^|;)\s*color:\s*var\(--[a-z]+\)/);
    }
    // Superseded is neither a success nor a failure: its own colours.
    const superseded = rulesFor(css, "badge-superseded");
    for (const taken of ["ok", "warn", "bad", "idle"]) expect(superseded, taken).to.not.include(`var(--${taken}`);
  });
});
