import { expect } from "chai";
import { NoteWriter, type Note, type NoteWriterOptions } from "../../../src/store/embedded/history/note-writer";
import type { RunNote } from "../../../src/store/history";
import { recordingLogger, type LogLine } from "../../helpers/wait";

/** When the embedded history's writer writes its batches while notes keep coming. */
describe("the event history's writer under a steady stream of notes", () => {
  const run = (n: number): Note => ({ run: { eventId: `e${n}` } as unknown as RunNote });
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  /** A writer whose writes take `writeMs` each, fed a note every 5 ms while `feeding`; records when each write started and ended. */
  function streamed(options: NoteWriterOptions, writeMs: number, fail: (n: number) => boolean = () => false) {
    const writes: Array<{ start: number; end: number; notes: number }> = [];
    const lines: LogLine[] = [];
    const writer = new NoteWriter(
      async (notes) => {
        const start = Date.now();
        const n = writes.length;
        await sleep(writeMs);
        writes.push({ start, end: Date.now(), notes: notes.length });
        if (fail(n)) throw new Error("disk I/O error");
      },
      () => true,
      recordingLogger(lines),
      options,
    );
    let i = 0;
    const feeder = setInterval(() => writer.add(run(i++)), 5);
    return { writer, writes, lines, stop: () => clearInterval(feeder) };
  }

  it("waits the gap after a batch before writing what came meanwhile, rather than writing back to back", async () => {
    const s = streamed({ intervalMs: 350, gapMs: 300 }, 20);
    await sleep(1_200);
    s.stop();
    await s.writer.flush();
    const [first, second] = s.writes;
    expect(first, "a first batch within its interval").to.not.equal(undefined);
    expect(second, "a second batch").to.not.equal(undefined);
    // Back to back, the second would start as the first ended, holding the 4 or so notes of one write.
    expect(second!.start - first!.end).to.be.at.least(250);
    expect(second!.notes).to.be.at.least(30);
  });

  it("writes a full batch at once, without waiting for the gap", async () => {
    const written: number[] = [];
    const writer = new NoteWriter(async (notes) => void written.push(notes.length), () => true, recordingLogger([]), { intervalMs: 60_000, gapMs: 60_000, batchNotes: 10 });
    for (let i = 0; i < 10; i++) writer.add(run(i));
    await sleep(50);
    expect(written).to.deep.equal([10]);
    for (let i = 10; i < 20; i++) writer.add(run(i));
    await sleep(50);
    expect(written).to.deep.equal([10, 10]);
  });

  it("writes at once what a flush asks for, even within the gap", async () => {
    const s = streamed({ intervalMs: 60_000, gapMs: 60_000 }, 5);
    await sleep(30);
    await s.writer.flush();
    await sleep(150);
    s.stop();
    const before = s.writes.length;
    expect(before, "the flushed batch, then the long gap").to.equal(1);
    await s.writer.flush();
    expect(s.writes.length).to.equal(before + 1);
  });

  it("tries a failed batch again after the interval, not the shorter gap", async () => {
    const s = streamed({ intervalMs: 400, gapMs: 10 }, 5, (n) => n === 0);
    await sleep(1_000);
    s.stop();
    await s.writer.flush();
    const [failed, retried] = s.writes;
    expect(retried!.start - failed!.end).to.be.at.least(350);
    expect(s.lines.some((l) => l.msg.includes("could not write a batch of notes; trying again"))).to.equal(true);
  });
});
