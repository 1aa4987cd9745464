import { expect } from "chai";
import { NoteWriter, type Note } from "../../../src/store/embedded/history/note-writer";
import type { RunNote } from "../../../src/store/history";
import { recordingLogger, type LogLine } from "../../helpers/wait";

/** The history's writer on a disk without room: it drops notes rather than take the queues' room. */
describe("the event history's writer when the disk is nearly full", () => {
  const run = (n: number): Note => ({ run: { eventId: `e${n}` } as unknown as RunNote });

  it("drops the notes without writing them, logs it once, and writes again once room comes back", async () => {
    const lines: LogLine[] = [];
    const written: Note[] = [];
    let room = false;
    const asked: number[] = [];
    const writer = new NoteWriter(
      async (notes) => void written.push(...notes),
      () => true,
      recordingLogger(lines),
      { intervalMs: 10 },
      (bytes) => (asked.push(bytes), room),
    );
    for (let i = 0; i < 5; i++) writer.add(run(i));
    await writer.flush();
    for (let i = 5; i < 10; i++) writer.add(run(i));
    await writer.flush();
    expect(written).to.have.length(0);
    expect(writer.droppedForRoom).to.equal(10);
    expect(asked.every((b) => b > 0), "asked with the batch's size").to.equal(true);
    expect(lines.filter((l) => l.msg.includes("the event history drops notes so that the queues keep their room"))).to.have.length(1);

    room = true;
    writer.add(run(10));
    await writer.flush();
    expect(written.map((n) => n.run!.eventId)).to.deep.equal(["e10"]);
    writer.stop();
  });
});
