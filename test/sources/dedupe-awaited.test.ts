import { expect } from "chai";
import { CoreApp, silentLogger, WebhookSource } from "../../src/index";
import { gate, sleep } from "../helpers/app";
import { until } from "../helpers/wait";
import { PostgresFixture } from "../store/postgres/postgres-fixture";

/**
 * A sender that waits for the outcome (ack "processed", reply "result") resends while the
 * first copy's task runs: no copy may get a 2xx unless the event will be (or was) processed.
 */
describe("deduplication while the original's awaited outcome is pending", function () {
  this.timeout(30_000);
  const apps: CoreApp[] = [];
  const fixture = new PostgresFixture();
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.stop({ timeoutMs: 2_000 })));
    await fixture.cleanup();
  });

  const send = (url: string) => fetch(url, { method: "POST", headers: { "x-delivery-id": "d-1" }, body: "x" });

  type Store = ConstructorParameters<typeof CoreApp>[1] extends infer O ? (O extends { store?: infer S } ? S : never) : never;

  /** An app whose task's first run waits for `release`, then fails (or succeeds: `failFirst` false); later runs succeed. */
  async function start(mode: object, release: Promise<void>, store: Store = "memory", runs = { started: 0, ok: 0 }, failFirst = true) {
    const source = new WebhookSource({ path: "/d", port: 0, dedupe: { header: "x-delivery-id" }, ackTimeoutMs: 10_000, ...mode });
    const app = new CoreApp("dedupe-awaited", { store, logger: silentLogger });
    app.task({ source, name: "t", retry: { initialDelayMs: 100, factor: 1 } }, async () => {
      if (++runs.started === 1) {
        await release;
        if (failFirst) throw new Error("the first run fails");
      }
      runs.ok++;
      return undefined;
    });
    apps.push(app);
    await app.start();
    return { url: source.url, runs };
  }

  for (const mode of [{ ack: "processed" as const }, { reply: "result" as const }]) {
    it(`${JSON.stringify(mode)}: a copy sent while the first copy's task runs shares its failure, and the sender's next copy is processed`, async () => {
      const release = gate();
      const { url, runs } = await start(mode, release.promise);
      const first = send(url);
      await until(() => runs.started === 1, 5_000);
      const second = send(url);
      await sleep(300);
      release.open();
      const [a, b] = await Promise.all([first, second]);
      expect([a.status, b.status]).to.deep.equal([500, 500]);
      expect(await b.json()).to.deep.include({ error: "task_failed" });
      const third = await send(url);
      expect(third.status).to.equal(202);
      expect(runs).to.deep.equal({ started: 2, ok: 1 });
      const fourth = await send(url);
      expect(fourth.status).to.equal(200);
      expect(await fourth.json()).to.deep.include({ duplicate: true });
    });
  }

  it("a copy sent while the first copy's task runs and then succeeds gets the 200 duplicate answer, as do later copies", async () => {
    const release = gate();
    const { url, runs } = await start({ ack: "processed" }, release.promise, "memory", undefined, false);
    const first = send(url);
    await until(() => runs.started === 1, 5_000);
    const second = send(url);
    await sleep(300);
    release.open();
    const [a, b] = await Promise.all([first, second]);
    expect(a.status).to.equal(202);
    expect(b.status).to.equal(200);
    expect(await b.json()).to.deep.include({ duplicate: true });
    const third = await send(url);
    expect(third.status).to.equal(200);
    expect(await third.json()).to.deep.include({ duplicate: true });
    expect(runs).to.deep.equal({ started: 1, ok: 1 });
  });

  it("PostgreSQL, two replicas: a copy reaching the other replica while the outcome is pending gets 503 duplicate_in_progress, never a 2xx before the event is processed", async () => {
    const schema = fixture.schema();
    const release = gate();
    const runs = { started: 0, ok: 0 };
    const a = await start({ ack: "processed", ackTimeoutMs: 3_000 }, release.promise, fixture.store({ schema }), runs);
    const b = await start({ ack: "processed", ackTimeoutMs: 3_000 }, release.promise, fixture.store({ schema }), runs);
    const first = send(a.url);
    await until(() => runs.started === 1, 5_000);
    const second = await send(b.url);
    expect(second.status).to.equal(503);
    expect(second.headers.get("retry-after")).to.match(/^\d+$/);
    expect(await second.json()).to.deep.include({ error: "duplicate_in_progress" });
    release.open();
    const firstAnswer = await first;
    // The sender keeps sending copies to replica b until one gets a 2xx; by then the event is processed.
    let answer = await send(b.url);
    for (let i = 0; answer.status === 503 && i < 100; i++) {
      await sleep(200);
      answer = await send(b.url);
    }
    expect(answer.status, `first copy answered ${firstAnswer.status}`).to.be.oneOf([200, 202]);
    await until(() => runs.ok >= 1, 10_000);
    expect(runs.ok).to.equal(1);
  });
});
