import { createConnection, createServer, type Server, type Socket } from "node:net";
import { expect } from "chai";
import { CoreApp, silentLogger } from "../../../src/index";
import { PostgresStore } from "../../../src/store/postgres/postgres-store";
import { webhook } from "../../helpers/app";
import { postJson } from "../../helpers/http-client";
import { until } from "../../helpers/wait";
import { PostgresFixture } from "./postgres-fixture";

/**
 * A TCP proxy to the test server that, once armed, lets the next INSERT of new messages
 * through and cuts the connection once the server has answered it, without passing the answer:
 * the commit happened (however long the server took), its answer is lost.
 */
const READY_FOR_QUERY = Buffer.from([0x5a, 0, 0, 0, 5]);

class ReplyCutter {
  readonly server: Server;
  private armedFor: string | undefined;
  cuts = 0;

  constructor(private readonly target: URL) {
    this.server = createServer((client) => this.connect(client));
  }

  async listen(): Promise<number> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    return (this.server.address() as { port: number }).port;
  }

  /** Cuts the connection carrying the next statement that holds `text`. */
  arm(text: string): void {
    this.armedFor = text;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private connect(client: Socket): void {
    const upstream = createConnection(Number(this.target.port || 5432), this.target.hostname);
    let replies = true;
    upstream.on("data", (chunk) => {
      if (replies) return void client.write(chunk);
      // The server is ready for the next statement (ReadyForQuery, 'Z' of length 5): the
      // statement committed. Its reply is dropped and the connection breaks.
      if (chunk.includes(READY_FOR_QUERY)) {
        client.destroy();
        upstream.destroy();
      }
    });
    client.on("data", (chunk) => {
      upstream.write(chunk);
      if (this.armedFor !== undefined && chunk.includes(this.armedFor)) {
        this.armedFor = undefined;
        this.cuts++;
        replies = false;
      }
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on("error", end);
    upstream.on("error", end);
    client.on("close", end);
    upstream.on("close", end);
  }
}

describe("PostgreSQL: an enqueue whose commit reply is lost", function () {
  this.timeout(40_000);
  const fixture = new PostgresFixture();
  let app: CoreApp | undefined;
  let cutter: ReplyCutter | undefined;
  afterEach(async () => {
    await app?.stop({ timeoutMs: 2_000 });
    app = undefined;
    await cutter?.close();
    cutter = undefined;
    await fixture.cleanup();
  });

  it("is answered 202 when the event was committed, and the sender's resend is a duplicate", async () => {
    const target = new URL(fixture.url);
    cutter = new ReplyCutter(target);
    const port = await cutter.listen();
    const proxied = new URL(fixture.url);
    proxied.host = `127.0.0.1:${port}`;
    const schema = fixture.schema();
    // Not prepared: each INSERT then carries its text, which the proxy looks for.
    const store = fixture.store({ connectionString: proxied.toString(), schema, preparedStatements: false });
    const source = webhook({ dedupe: { header: "x-delivery" } });
    const runs: string[] = [];
    app = new CoreApp("lost-reply", { store, logger: silentLogger });
    app.task({ source, name: "t" }, async (ctx) => {
      runs.push(ctx.eventId);
    });
    await app.start();
    cutter.arm(`INSERT INTO "${schema}".messages`);
    const first = await postJson(source.url, { n: 1 }, { "x-delivery": "d-1" });
    expect(cutter.cuts).to.equal(1);
    expect(first.status).to.equal(202);
    await until(() => runs.length === 1, 10_000);
    // The sender's resend (after any 5xx it would have got), once the store takes work again.
    await until(() => (app as CoreApp).readiness().ready, 10_000);
    const again = await postJson(source.url, { n: 1 }, { "x-delivery": "d-1" });
    expect(again.status).to.equal(200);
    await new Promise((r) => setTimeout(r, 1_500));
    expect(runs).to.have.length(1);
    expect(store).to.be.instanceOf(PostgresStore);
  });
});
