import { createConnection, createServer, type Server, type Socket } from "node:net";
import { expect } from "chai";
import { CoreApp, silentLogger } from "../../../src/index";
import { webhook } from "../../helpers/app";
import { postJson } from "../../helpers/http-client";
import { closeTogether } from "../../helpers/socket-pair";
import { until } from "../../helpers/wait";
import { PostgresFixture } from "./postgres-fixture";

/**
 * A TCP proxy to the test server that can make the connection which ran LISTEN go silent:
 * from then on nothing passes either way and nothing closes, as when the database's host
 * vanished or a firewall started dropping the packets. Other connections pass as before.
 */
class SilentListen {
  readonly server: Server;
  private readonly listening = new Set<Socket>();
  private readonly silenced = new Set<Socket>();
  private readonly sockets = new Set<Socket>();

  constructor(private readonly target: URL) {
    this.server = createServer((client) => this.connect(client));
  }

  async listen(): Promise<number> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    return (this.server.address() as { port: number }).port;
  }

  /** How many connections have run LISTEN so far. */
  get listens(): number {
    return this.listening.size + this.silenced.size;
  }

  silence(): void {
    for (const socket of this.listening) this.silenced.add(socket);
    this.listening.clear();
  }

  close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private connect(client: Socket): void {
    const upstream = createConnection(Number(this.target.port || 5432), this.target.hostname);
    this.sockets.add(client).add(upstream);
    upstream.on("data", (chunk) => {
      if (!this.silenced.has(client)) client.write(chunk);
    });
    client.on("data", (chunk) => {
      if (this.silenced.has(client)) return;
      if (chunk.includes("LISTEN \"")) this.listening.add(client);
      upstream.write(chunk);
    });
    closeTogether(client, upstream);
  }
}

describe("PostgreSQL: a listening connection gone silent", function () {
  this.timeout(30_000);
  const fixture = new PostgresFixture();
  const apps: CoreApp[] = [];
  let proxy: SilentListen | undefined;
  afterEach(async () => {
    for (const app of apps.splice(0)) await app.stop({ timeoutMs: 2_000 });
    await proxy?.close();
    proxy = undefined;
    await fixture.cleanup();
  });

  it("is found out and replaced: a pause made by another replica then reaches this one", async () => {
    proxy = new SilentListen(new URL(fixture.url));
    const proxied = new URL(fixture.url);
    proxied.host = `127.0.0.1:${await proxy.listen()}`;
    const schema = fixture.schema();
    const ran: string[] = [];
    const source = webhook({ path: "/work" });
    const replica = (name: string, connectionString: string): CoreApp => {
      const store = fixture.store({ connectionString, schema, depthRefreshMs: 200, statementTimeoutMs: 500, consumer: name === "near" });
      const app = new CoreApp(name, { store, logger: silentLogger });
      app.task({ source: name === "near" ? source : webhook({ path: "/work" }), name: "work" }, (ctx) => void ran.push(ctx.eventId));
      apps.push(app);
      return app;
    };
    const near = replica("near", proxied.toString());
    const far = replica("far", fixture.url);
    await near.start();
    await far.start();
    await until(() => proxy!.listens === 1, 5_000);
    proxy.silence();
    await far.pause("work");
    // The silent connection is found out by its check, and replaced.
    await until(() => proxy!.listens === 2, 10_000);
    await new Promise((resolve) => setTimeout(resolve, 500));
    // The pause, read again once listening again, holds this replica's runs too.
    expect((await postJson(source.url, { n: 1 })).status).to.equal(202);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(ran).to.deep.equal([]);
    await far.resume("work");
    await until(() => ran.length === 1, 5_000);
  });
});
