import { expect } from "chai";
import { randomUUID } from "node:crypto";
import { derivedEventId, EventIds, newEventId } from "../../src/util/event-id";

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** The Unix milliseconds an id carries. */
const msOf = (id: string) => parseInt(id.slice(0, 8) + id.slice(9, 13), 16);

describe("event ids (UUID version 7)", () => {
  it("are UUIDs of version 7 and the RFC variant, carrying the millisecond they were made", () => {
    const now = Date.now();
    const id = new EventIds().next(now);
    expect(newEventId()).to.match(V7);
    expect(id).to.match(V7);
    expect(msOf(id)).to.equal(now);
  });

  it("sort in the order they were made, within one millisecond too, and never repeat", () => {
    const start = Date.now();
    const made = new EventIds();
    const ids: string[] = [];
    for (let i = 0; i < 100_000; i++) ids.push(made.next(start + Math.floor(i / 1_000)));
    expect([...ids].sort()).to.deep.equal(ids);
    expect(new Set(ids).size).to.equal(ids.length);
    for (const id of ids) expect(id).to.match(V7);
  });

  it("keep sorting forward when the clock steps back, and move to the next millisecond past 4,096 ids in one", () => {
    const at = Date.now();
    const made = new EventIds();
    const first = made.next(at);
    const back = made.next(at - 5_000);
    expect(back > first).to.equal(true);
    expect(msOf(back)).to.equal(at);
    const many: string[] = [];
    for (let i = 0; i < 5_000; i++) many.push(made.next(at));
    expect([...many].sort()).to.deep.equal(many);
    expect(msOf(many[many.length - 1]!)).to.be.greaterThan(at);
  });
});

describe("derived event ids", () => {
  const V8 = /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

  it("are the same for the same input and name, and differ for another name or input", () => {
    const input = newEventId();
    expect(derivedEventId(input, "task")).to.equal(derivedEventId(input, "task"));
    expect(derivedEventId(input, "task")).not.to.equal(derivedEventId(input, "other"));
    expect(derivedEventId(input, "task")).not.to.equal(derivedEventId(newEventId(), "task"));
  });

  it("keep the input's time as a version 8 UUID, down a chain and from a fan-out copy's id, and sort just after the input", () => {
    const now = Date.now();
    const input = new EventIds().next(now);
    const child = derivedEventId(input, "first");
    const grandchild = derivedEventId(child, "second");
    const fromCopy = derivedEventId(`${input}@task`, "task");
    for (const id of [child, grandchild, fromCopy]) {
      expect(id).to.match(V8);
      expect(msOf(id)).to.equal(now);
      expect(id > input).to.equal(true);
    }
  });

  it("take the earlier 24-character form for ids that carry no time", () => {
    const id = derivedEventId("order-17", "task");
    expect(id).to.match(/^[A-Za-z0-9_-]{24}$/);
    expect(derivedEventId(randomUUID(), "task")).to.match(/^[A-Za-z0-9_-]{24}$/);
  });
});

