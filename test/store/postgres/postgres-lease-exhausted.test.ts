import { expect } from "chai";
import { CoreApp, silentLogger } from "../../../src/index";
import { until } from "../../helpers/wait";
import { message } from "../store-conformance";
import { PostgresFixture } from "./postgres-fixture";

/**
 * A message whose every run ends its process (it never returns, so the runner never records a
 * failure) only gains attempts from lease take-backs. Once those reach the task's retry
 * attempts it must become a dead letter, not run again: docs/replicas.md promises that "a
 * message that kills every replica that runs it ends as a dead letter".
 */
describe("PostgreSQL: attempts used up by lost leases", function () {
  this.timeout(30_000);
  const fixture = new PostgresFixture();
  let app: CoreApp | undefined;
  afterEach(async () => {
    await app?.stop({ timeoutMs: 2_000 });
    app = undefined;
    await fixture.cleanup();
  });

  it("a message taken back from as many dead claimers as the task has attempts is dead-lettered, not run again", async () => {
    const schema = fixture.schema();
    const seed = fixture.store({ schema });
    await seed.open();
    await seed.enqueue("in", message("poison", { boom: true }));
    await seed.enqueue("in", message("fine", { boom: false }));
    await seed.close();
    // Three replicas claim it and go away without finishing it: each give-back counts an attempt.
    for (let i = 0; i < 3; i++) {
      const claimer = fixture.store({ schema });
      await claimer.open();
      const [claimed] = await claimer.claim("in", 1);
      expect(claimed.id).to.equal("poison");
      await claimer.close();
    }
    const ran: string[] = [];
    app = new CoreApp("exhausted", { store: fixture.store({ schema }), logger: silentLogger });
    app.task({ source: "in", name: "t", retry: { attempts: 3 } }, async (ctx) => {
      ran.push(ctx.eventId);
    });
    const letters: Array<{ eventId: string; attempts: number }> = [];
    app.on("deadLetter", (letter) => {
      letters.push({ eventId: letter.eventId, attempts: letter.attempts });
    });
    await app.start();
    await until(() => ran.includes("fine") && (letters.length === 1 || ran.includes("poison")), 10_000);
    expect(ran).to.deep.equal(["fine"]);
    // The refused delivery counts too: three runs lost, a fourth not made.
    expect(letters).to.deep.equal([{ eventId: "poison", attempts: 4 }]);
    const [letter] = await app.deadLetters.list("in");
    expect(letter.message.id).to.equal("poison");
    expect(letter.attempts).to.equal(4);
    expect(letter.error).to.match(/stopped renewing its lease/);
  });
});
