import { expect } from "chai";
import { message, rejection } from "../store-conformance";
import { PostgresFixture } from "./postgres-fixture";

describe("PostgresStore: an event's copies in one INSERT", function () {
  this.timeout(30_000);
  const fixture = new PostgresFixture();
  afterEach(() => fixture.cleanup());

  it("a copy the store cannot hold (a NUL in its id) takes the others with it: no copy stored, the store keeps working", async () => {
    const store = fixture.store();
    await store.open();
    const error = await rejection(
      store.enqueueAll([
        { queue: "webhook:a", message: message("e@a") },
        { queue: "webhook:b", message: message("e@b") },
        { queue: "webhook:c", message: message("e\u0000@c") },
      ]),
    );
    expect(String((error as Error).cause)).to.match(/message id holds the character U\+0000/);
    for (const queue of ["webhook:a", "webhook:b", "webhook:c"]) expect(await store.depth(queue)).to.equal(0);
    expect(store.failure).to.equal(undefined);
    // Three copies, one statement (one commit).
    const before = store.batches.enqueues;
    await store.enqueueAll([
      { queue: "webhook:a", message: message("f@a") },
      { queue: "webhook:b", message: message("f@b") },
      { queue: "webhook:c", message: message("f@c") },
    ]);
    expect(store.batches.enqueues - before).to.equal(1);
    for (const queue of ["webhook:a", "webhook:b", "webhook:c"]) expect(await store.depth(queue)).to.equal(1);
  });
});
