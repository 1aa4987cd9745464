import { existsSync } from "node:fs";
import { expect } from "chai";
import { chromium, type Browser } from "playwright-core";
import { CoreApp, silentLogger, WebhookSource } from "../../src/index";

/** Debian's chromium, as the console's other browser test finds it (importing that file would run its suite too). */
function chromiumPath(): string | undefined {
  const named = process.env.CHROMIUM_PATH;
  if (named !== undefined && named !== "") return existsSync(named) ? named : undefined;
  return ["/usr/bin/chromium", "/usr/bin/chromium-browser"].find((path) => existsSync(path));
}

/**
 * What a newcomer meets first: the sample app's overview, with its long `Class.method` task
 * names, on a laptop-sized window. The pause button must be there without scrolling sideways.
 */
describe("console overview on a laptop-sized window", function () {
  this.timeout(60_000);
  let browser: Browser | undefined;
  let app: CoreApp | undefined;

  before(function () {
    if (chromiumPath() === undefined) {
      if (process.env.CI === "true") throw new Error("chromium is not installed (apt-get install chromium): the console's browser test cannot run");
      this.skip();
    }
  });

  after(async () => {
    await browser?.close();
    await app?.stop({ timeoutMs: 1_000 });
  });

  it("shows each task's state and its Pause button without scrolling sideways", async () => {
    app = new CoreApp("samples", { store: "memory", logger: silentLogger, console: { port: 0 } });
    const hooks = new WebhookSource({ path: "/hooks/slack/command", host: "127.0.0.1", port: 0 });
    for (const name of ["GitHubHandlers.summarisePush", "SignedHandlers.verifiedDelivery", "OrderHandlers.receiveOrder"]) {
      app.task({ source: hooks, name }, async () => undefined);
    }
    await app.start();
    browser = await chromium.launch({ executablePath: chromiumPath(), headless: true, args: ["--no-sandbox"] });
    const page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
    await page.goto(app.consoleUrl!);
    const buttons = page.locator("button:text('Pause')");
    expect(await buttons.count()).to.equal(3);
    for (const button of await buttons.all()) {
      const box = await button.boundingBox();
      expect(box, "the Pause button has a box").to.not.equal(null);
      expect(box!.x + box!.width, "the Pause button's right edge, in a 1280 px window").to.be.at.most(1280);
    }
  });
});
