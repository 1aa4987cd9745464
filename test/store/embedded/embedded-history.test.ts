import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EmbeddedStore } from "../../../src/store/embedded/embedded-store";
import type { Store } from "../../../src/store/store";
import { describeHistoryConformance } from "../history-conformance";

const dirs: string[] = [];
const dirOf = new WeakMap<Store, string>();

function storeIn(dir: string): EmbeddedStore {
  const store = new EmbeddedStore({ dir, sweepIntervalMs: 60_000 });
  dirOf.set(store, dir);
  return store;
}

describeHistoryConformance(
  "embedded",
  () => {
    const dir = mkdtempSync(join(tmpdir(), "wt-history-"));
    dirs.push(dir);
    return storeIn(dir);
  },
  {
    cleanup: () => {
      for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
    },
    reopen: (closed) => storeIn(dirOf.get(closed)!),
  },
);
