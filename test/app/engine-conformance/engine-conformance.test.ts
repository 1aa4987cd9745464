import { expect } from "chai";
import { writeFileSync } from "node:fs";
import type { CoreApp } from "../../../src/index";
import { ENGINES, useEngineApps, type Engine } from "../../helpers/engine-apps";
import { runEdgesScenario } from "./edges-scenario";
import { runFlowScenario } from "./flow-scenario";
import { runPayloadScenario } from "./payload-scenario";
import { runScenario, type Observation } from "./scenario";

/**
 * JSON with object keys sorted: the order of keys is not compared. The PostgreSQL history keeps
 * payloads as jsonb, which orders an object's keys its own way (docs/postgres.md); every list
 * (events, deliveries, runs of a task, pages, links) is compared in order.
 */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    typeof v === "object" && v !== null && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : v,
  );
}

/** Every step whose observation differs from the memory engine's, with both. */
function differences(seen: ReadonlyMap<Engine, Observation>): string[] {
  const memory = seen.get("memory")!;
  const diffs: string[] = [];
  for (const engine of ["embedded", "postgres"] as const) {
    const other = seen.get(engine)!;
    for (const key of new Set([...Object.keys(memory), ...Object.keys(other)])) {
      const a = canonical(memory[key]);
      const b = canonical(other[key]);
      if (a !== b) diffs.push(`${engine} / ${key}:\n  memory: ${a}\n  ${engine}: ${b}`);
    }
  }
  return diffs;
}

describe("engine conformance: one scenario, the same answers on every engine", function () {
  this.timeout(120_000);
  const engineApp = useEngineApps("engine-conformance");

  async function each(scenario: (app: CoreApp) => Promise<Observation>): Promise<Map<Engine, Observation>> {
    const seen = new Map<Engine, Observation>();
    for (const engine of ENGINES) seen.set(engine, await scenario(engineApp(engine, "conf")));
    // CONFORMANCE_DUMP=file.json keeps every engine's observations, to read a difference whole.
    const dump = process.env.CONFORMANCE_DUMP;
    if (dump !== undefined) writeFileSync(dump, JSON.stringify(Object.fromEntries(seen), (_k, v: unknown) => (typeof v === "bigint" ? String(v) : v), 1));
    return seen;
  }

  it("fan-out, retries, dead letters, emit chains, pauses, searches, pages and replays", async () => {
    const diffs = differences(await each(runScenario));
    expect(diffs, diffs.join("\n")).to.deep.equal([]);
  });

  it("bodies, queries and headers of every kind: kept, searched and replayed alike", async () => {
    const diffs = differences(await each(runPayloadScenario));
    expect(diffs, diffs.join("\n")).to.deep.equal([]);
  });

  it("edges: an unconsumed queue, cursors reused, empty windows, odd limits, replays by filter, status", async () => {
    const diffs = differences(await each(runEdgesScenario));
    expect(diffs, diffs.join("\n")).to.deep.equal([]);
  });

  it("debounced bursts, batches and timeouts: as the history shows them", async () => {
    const diffs = differences(await each(runFlowScenario));
    expect(diffs, diffs.join("\n")).to.deep.equal([]);
  });
});
