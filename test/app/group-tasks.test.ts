import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { groupTaskSuite } from "./group-tasks-suite";

groupTaskSuite("memory", () => ({ store: "memory" }));

const dirs: string[] = [];
groupTaskSuite(
  "embedded",
  () => {
    const dir = mkdtempSync(join(tmpdir(), "groups-"));
    dirs.push(dir);
    return { store: "embedded", dataDir: dir };
  },
  async () => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  },
);
