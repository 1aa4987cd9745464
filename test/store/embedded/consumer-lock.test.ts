import { expect } from "chai";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DataDirInUseError } from "../../../src/store/embedded/consumer-lock";
import { EmbeddedStore } from "../../../src/store/embedded/embedded-store";

const RACER = join(__dirname, "fixtures", "lock-racer.js");
const RACERS = 4;
const ROUNDS = 25;
const GAP_MS = 40;

/** Starts RACERS processes that race for the lock of each round's directory at the same moment; returns each round's outcomes. */
async function race(base: string): Promise<Map<number, string[]>> {
  const start = Date.now() + 1_500; // every racer started and waiting
  const outputs = await Promise.all(
    Array.from({ length: RACERS }, async () => {
      const child = spawn(process.execPath, [RACER, base, String(start), String(ROUNDS), String(GAP_MS)], { stdio: ["ignore", "pipe", "inherit"] });
      let out = "";
      child.stdout!.on("data", (chunk: Buffer) => (out += chunk.toString()));
      await once(child, "exit");
      return out;
    }),
  );
  const rounds = new Map<number, string[]>();
  for (const line of outputs.join("").split("\n").filter(Boolean)) {
    const [round, ...outcome] = line.split(" ");
    rounds.set(Number(round), [...(rounds.get(Number(round)) ?? []), outcome.join(" ")]);
  }
  return rounds;
}

/** Rounds where the racers did not end with exactly one holder and the rest refused as in use. */
function wrongRounds(rounds: Map<number, string[]>): string[] {
  const wrong: string[] = [];
  for (const [round, outcomes] of rounds) {
    const held = outcomes.filter((o) => o === "held").length;
    const refused = outcomes.filter((o) => o === "refused").length;
    if (held !== 1 || refused !== RACERS - 1) wrong.push(`round ${round}: ${outcomes.sort().join(", ")}`);
  }
  return wrong;
}

describe("the consumer lock, taken by several processes at the same moment", function () {
  this.timeout(30_000);
  let base: string;

  beforeEach(() => {
    base = mkdtempSync(join(tmpdir(), "lock-race-"));
  });
  afterEach(() => rmSync(base, { recursive: true, force: true }));

  it("on a new directory: one process takes it, every other is refused as in use", async () => {
    for (let round = 0; round < ROUNDS; round++) mkdirSync(join(base, String(round)));
    const rounds = await race(base);
    expect(rounds.size).to.equal(ROUNDS);
    expect(wrongRounds(rounds)).to.deep.equal([]);
  });

  it("over a stale lock (its process is gone): one process takes it over, every other is refused as in use", async () => {
    for (let round = 0; round < ROUNDS; round++) {
      mkdirSync(join(base, String(round)));
      writeFileSync(join(base, String(round), "consumer.lock"), JSON.stringify({ pid: 999_999_999 }));
    }
    const rounds = await race(base);
    expect(rounds.size).to.equal(ROUNDS);
    expect(wrongRounds(rounds)).to.deep.equal([]);
  });
});

describe("the consumer lock, within one process", () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), "lock-here-"))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("refuses a second store on a directory another store of this process consumes (through a symlink too); the first keeps the lock until it closes", async () => {
    const first = new EmbeddedStore({ dir });
    await first.open();
    const link = join(tmpdir(), `lock-here-link-${process.pid}`);
    symlinkSync(dir, link);
    try {
      for (const other of [dir, link]) {
        const second = new EmbeddedStore({ dir: other });
        const error = await second.open().then(() => undefined, (e: unknown) => e);
        // Both would claim the same messages; the one stopped first would drop the other's lock.
        expect(error, "a second store opened").to.be.instanceOf(DataDirInUseError);
        expect((error as Error).message).to.equal(`data directory ${other} is in use by another store of this process (an app not stopped yet?): one process consumes a data directory at a time (claims live in its memory)`);
        await second.close();
        expect(existsSync(join(dir, "consumer.lock"))).to.equal(true);
      }
      await first.enqueue("q", { id: "m1", payload: 1, attempts: 0, enqueuedAt: Date.now() });
      await first.close();
      expect(existsSync(join(dir, "consumer.lock"))).to.equal(false);
      const third = new EmbeddedStore({ dir });
      await third.open();
      try {
        expect((await third.claim("q", 10)).map((m) => m.id)).to.deep.equal(["m1"]);
      } finally {
        await third.close();
      }
    } finally {
      rmSync(link, { force: true });
    }
  });
});
