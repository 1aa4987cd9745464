import { expect } from "chai";
import { sourceHint } from "../../src/cli/source-hint";
import { useApps, webhook } from "../helpers/app";
import { send } from "../helpers/http-client";
import { until } from "../helpers/wait";

describe("CLI: events --source that matches nothing", () => {
  const newApp = useApps();

  it("names the sources the latest events came from, unless the source is among them", async () => {
    const app = newApp();
    const hook = webhook({ path: "/hooks/github" });
    app.task({ source: hook, name: "receive" }, async () => undefined);
    // Nothing received yet: nothing to suggest.
    await app.start();
    expect(await sourceHint(app.events, "github")).to.equal(undefined);
    const reply = await send(hook.url, { body: "{}", headers: { "content-type": "application/json" } });
    expect(reply.status).to.equal(202);
    await until(async () => (await app.events.list({})).events.length === 1);
    // The first guess, the sender's name, is not the label: the path without its "/" is.
    expect(await sourceHint(app.events, "github")).to.equal('no event came from a source "github"; the latest events came from: hooks/github (a source is named by its path without the leading "/")');
    // The right label with other filters that exclude everything: no hint.
    expect(await sourceHint(app.events, "hooks/github")).to.equal(undefined);
  });
});
