import { expect } from "chai";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { EmbeddedStoreOptions } from "../../../src/store/embedded/embedded-store";
import { encodeFrame, enqueueOp, newSegmentHeader, SEGMENT_HEADER_BYTES } from "../../../src/store/embedded/journal/journal-format";
import { encodeMeta } from "../../../src/store/embedded/journal/journal-lane";
import { readSegment } from "../../../src/store/embedded/journal/segment-reader";
import type { Logger } from "../../../src/util/logger";
import { recordingLogger, type LogLine } from "../../helpers/wait";
import { message } from "../store-conformance";
import { StoreFixture } from "./store-fixture";

const fixture = new StoreFixture("journal-damage-");
const EVENTS = 99;

const segmentsIn = (dir: string): string[] => readdirSync(join(dir, "journal")).filter((name) => name.endsWith(".wal")).sort();

/** A store directory whose journal holds EVENTS messages, one frame each, none consumed. */
async function journalOf99(): Promise<{ dir: string; file: string }> {
  const dir = join(fixture.tempDir(), "data");
  const store = await fixture.openStore({ dir });
  for (let i = 0; i < EVENTS; i++) await store.enqueue("q", message(`e${i}`, { n: i, pad: "x".repeat(200) }));
  await fixture.closeStore(store);
  const segments = segmentsIn(dir);
  expect(segments).to.have.length(1);
  return { dir, file: join(dir, "journal", segments[0]!) };
}

/** Reopens the directory with a logger that keeps its lines; returns the ids it can hand out. */
async function reopen(dir: string, lines: LogLine[]): Promise<string[]> {
  const logger: Logger = recordingLogger(lines);
  const options: EmbeddedStoreOptions = { dir, logger };
  const store = await fixture.openStore(options);
  return (await store.claim("q", 1_000)).map((m) => m.id);
}

function damageLines(lines: readonly LogLine[]): LogLine[] {
  return lines.filter((line) => /journal segment was damaged/.test(line.msg));
}

describe("damaged journal segments (real store)", function () {
  this.timeout(20_000);
  afterEach(() => fixture.cleanup());

  it("a byte flipped mid-file costs the one frame it hit: the rest are recovered, an error names the counts, the file is quarantined", async () => {
    const { dir, file } = await journalOf99();
    const bytes = readFileSync(file);
    bytes[Math.floor(bytes.length / 2)]! ^= 0x5a;
    writeFileSync(file, bytes);

    const lines: LogLine[] = [];
    const ids = await reopen(dir, lines);
    expect(ids.length, "events recovered").to.equal(EVENTS - 1);
    expect(new Set(ids).size).to.equal(EVENTS - 1);
    const [line, ...more] = damageLines(lines);
    expect(more).to.deep.equal([]);
    expect(line!.fields).to.include({ framesRecovered: EVENTS - 1, header: "intact" });
    expect(line!.fields!.bytesSkipped).to.be.within(200, 400); // one frame of ~300 bytes
    const quarantined = join(dir, "quarantine", file.split("/").pop()!);
    expect(line!.fields!.quarantinedAs).to.equal(quarantined);
    expect(readFileSync(quarantined)).to.deep.equal(bytes);
    expect(segmentsIn(dir)).to.deep.equal([]);
  });

  it("a damaged header (magic and salt) loses nothing: the salt is worked out from the frames", async () => {
    const { dir, file } = await journalOf99();
    const bytes = readFileSync(file);
    bytes[0]! ^= 0xff; // magic
    bytes[10]! ^= 0x3c; // salt
    bytes[13]! ^= 0x01; // salt
    writeFileSync(file, bytes);

    const lines: LogLine[] = [];
    const ids = await reopen(dir, lines);
    expect(ids.length, "events recovered").to.equal(EVENTS);
    const [line] = damageLines(lines);
    expect(line!.fields).to.include({ framesRecovered: EVENTS, bytesSkipped: 0, header: "repaired" });
    expect(existsSync(join(dir, "quarantine", file.split("/").pop()!))).to.equal(true);
  });

  it("a torn last frame (a crash) is no damage: nothing logged, nothing quarantined", async () => {
    const { dir, file } = await journalOf99();
    const bytes = readFileSync(file);
    writeFileSync(file, bytes.subarray(0, bytes.length - 100));
    const lines: LogLine[] = [];
    const ids = await reopen(dir, lines);
    expect(ids.length).to.equal(EVENTS - 1);
    expect(damageLines(lines)).to.deep.equal([]);
    expect(existsSync(join(dir, "quarantine"))).to.equal(false);
  });
});

describe("reading a damaged segment", () => {
  function segment(count: number, payloadBytes = 40): { file: Buffer; salt: Buffer } {
    const { bytes, header } = newSegmentHeader();
    const out = [bytes];
    for (let i = 0; i < count; i++) {
      const parts = enqueueOp(i + 1, i + 1, "q", encodeMeta(message(`m${String(i).padStart(3, "0")}`, { pad: "y".repeat(payloadBytes) })), undefined);
      out.push(encodeFrame(header, i, parts, parts.reduce((n, p) => n + p.length, 0)));
    }
    return { file: Buffer.concat(out), salt: header.salt };
  }
  const entries = (file: Buffer) => readSegment(file).ops.map((op) => op.entryId);

  it("skips a frame whose length field is damaged and reads every later one", () => {
    const { file } = segment(10);
    const third = SEGMENT_HEADER_BYTES + 2 * (file.length - SEGMENT_HEADER_BYTES) / 10;
    file.writeUInt32LE(0x00ff_ffff, third); // a length past the end of the file
    const read = readSegment(file);
    expect(entries(file)).to.deep.equal([1, 2, 4, 5, 6, 7, 8, 9, 10]);
    expect(read.damage).to.deep.include({ header: "intact", gaps: 1 });
    expect(read.frames).to.equal(9);
  });

  it("reads several damaged places, each costing its own frame", () => {
    const { file } = segment(20);
    const frame = (file.length - SEGMENT_HEADER_BYTES) / 20;
    for (const n of [0, 7, 19]) file[SEGMENT_HEADER_BYTES + n * frame + 20]! ^= 0xff;
    expect(entries(file)).to.deep.equal([2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19]);
    expect(readSegment(file).damage).to.deep.include({ gaps: 3, bytesSkipped: 3 * frame });
  });

  it("works out a salt damaged in every byte from two frames", () => {
    const { file } = segment(2);
    for (let i = 8; i < 16; i++) file[i]! ^= 0xa5;
    const read = readSegment(file);
    expect(read.frames).to.equal(2);
    expect(read.damage?.header).to.equal("repaired");
  });

  it("cannot check the frame of a one-frame segment whose salt is damaged in many bits: unreadable, not guessed", () => {
    const { file } = segment(1);
    for (let i = 8; i < 16; i++) file[i]! ^= 0xa5;
    const read = readSegment(file);
    expect(read.ops).to.deep.equal([]);
    expect(read.damage?.header).to.equal("unreadable");
  });

  it("trusts a one-frame segment's salt within one damaged byte", () => {
    const { file } = segment(1);
    file[9]! ^= 0xff;
    expect(entries(file)).to.deep.equal([1]);
    expect(readSegment(file).damage?.header).to.equal("repaired");
  });
});
