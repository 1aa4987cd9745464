import { expect } from "chai";
import { BearerAuth, createDefaultLogger } from "../../src/index";
import { useApps, webhook } from "../helpers/app";

type Line = Record<string, unknown> & { level: number; msg: string };

describe("webhook sources without auth", () => {
  const newApp = useApps();

  it("warns at start of each one listening beyond this machine, naming it and what to do; not of loopback ones or those with auth", async () => {
    const lines: Line[] = [];
    const logger = createDefaultLogger("info", {}, { write: (text: string) => void lines.push(JSON.parse(text) as Line) });
    const app = newApp("open", { logger });
    app.task({ source: webhook({ path: "/open", host: "0.0.0.0" }), name: "open" }, () => undefined);
    app.task({ source: webhook({ path: "/guarded", host: "0.0.0.0", auth: new BearerAuth("a-long-enough-token") }), name: "guarded" }, () => undefined);
    app.task({ source: webhook({ path: "/local" }), name: "local" }, () => undefined);
    await app.start();
    const warnings = lines.filter((l) => l.msg.includes("without auth"));
    expect(warnings.map((l) => l.source)).to.deep.equal(["open"]);
    expect(warnings[0].level).to.equal(40);
    expect(warnings[0].msg).to.contain("listens on 0.0.0.0 without auth").and.contain("BearerAuth").and.contain("127.0.0.1");
    expect(warnings[0].url).to.match(/^http:\/\/0\.0\.0\.0:\d+\/open$/);
  });
});
