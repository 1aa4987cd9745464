import { expect } from "chai";
import { CoreApp, MemoryStore, silentLogger } from "../../../src/index";
import { Collector, sleep, useApps, webhook } from "../../helpers/app";
import { postJson } from "../../helpers/http-client";
import { rejection, until } from "../../helpers/wait";

describe("pause and resume a task", () => {
  const newApp = useApps();

  it("keeps accepting and storing a paused task's events, runs none until resumed, leaves the other tasks running", async () => {
    const app = newApp();
    const hook = webhook({ path: "/p" });
    const paused = new Collector();
    const running = new Collector();
    app.task({ source: hook, name: "slowpoke" }, paused.handler);
    app.task({ source: hook, name: "busy" }, running.handler);
    await app.start();
    await app.pause("slowpoke");
    expect(await app.paused()).to.deep.equal(["slowpoke"]);
    const ids: string[] = [];
    for (let n = 0; n < 3; n++) {
      const reply = await postJson(hook.url, { n });
      expect(reply.status).to.equal(202);
      ids.push(reply.json<{ id: string }>().id);
      // Events of one millisecond are ordered by id: a tick between them keeps arrival order.
      await sleep(2);
    }
    await running.waitFor(3);
    await sleep(300);
    expect(paused.count).to.equal(0);
    expect((await app.status()).queues.find((q) => q.queue === "webhook:slowpoke")?.depth).to.equal(3);
    const pending = await app.events.list({ task: "slowpoke", status: "pending" });
    expect(pending.events.map((e) => e.id)).to.deep.equal([...ids].reverse());
    await app.resume("slowpoke");
    expect(await app.paused()).to.deep.equal([]);
    await paused.waitFor(3);
    await sleep(50);
    expect(paused.count).to.equal(3);
    expect(running.count).to.equal(3);
  });

  it("holds across a restart over the same store, and resumes when the store says so (another replica)", async () => {
    const store = new MemoryStore();
    const make = () => {
      const app = new CoreApp("paused-app", { store, logger: silentLogger });
      const got = new Collector();
      const hook = webhook({ path: "/r" });
      app.task({ source: hook, name: "work" }, got.handler);
      return { app, got, hook };
    };
    const first = make();
    await first.app.start();
    await first.app.pause("work");
    await first.app.stop();

    const second = make();
    await second.app.start();
    try {
      expect(await second.app.paused()).to.deep.equal(["work"]);
      expect((await postJson(second.hook.url, { n: 1 })).status).to.equal(202);
      await sleep(300);
      expect(second.got.count).to.equal(0);
      // Another replica resumes it: the store tells this one, which claims at once.
      await store.pauses.setPaused("work", false);
      await second.got.waitFor(1);
      // And pauses it again.
      await store.pauses.setPaused("work", true);
      await until(async () => (await second.app.paused()).length === 1);
      await sleep(20);
      await postJson(second.hook.url, { n: 2 });
      await sleep(300);
      expect(second.got.count).to.equal(1);
    } finally {
      await second.app.stop();
    }
  });

  it("refuses an unknown task, and before start", async () => {
    const app = newApp();
    app.task({ source: webhook({ path: "/u" }), name: "known" }, () => undefined);
    let err = await rejection(app.pause("known"));
    expect(err.message).to.match(/the store is open only between start\(\) and stop\(\)/);
    await app.start();
    err = await rejection(app.pause("knwon"));
    expect(err.message).to.match(/app\.pause\(\): no task "knwon" in app "test-\d+" \(did you mean "known"\?\); its tasks: known/);
    err = await rejection(app.resume("other"));
    expect(err.message).to.match(/app\.resume\(\): no task "other"/);
    expect(await app.paused()).to.deep.equal([]);
  });
});
