import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createStore, type StoreSpec } from "../store/create-store";
import type { Store } from "../store/store";

/**
 * The store a test runs on. "embedded" is a fresh temporary directory, removed when the test
 * app stops: the app's own data directory (./.data/<name>) is the one its development run uses,
 * which would refuse the test while that run is up, and otherwise mix the test's events into it
 * and hand the test whatever waited there.
 */
export function testStore(spec: StoreSpec, appName: string): { readonly store: Store; cleanUp(): void } {
  if (spec !== "embedded") return { store: createStore(spec, { appName }), cleanUp: () => undefined };
  const dir = mkdtempSync(join(tmpdir(), "webhook-tasks-test-"));
  return {
    store: createStore("embedded", { appName, dataDir: dir }),
    cleanUp: () => rmSync(dir, { recursive: true, force: true }),
  };
}
