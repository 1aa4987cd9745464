import { bootstrap } from "webhook-tasks";
import { AppModule } from "./app.module";
import { developmentValuesInUse } from "./development-secret";
import { ORDERS_TOKEN, ordersHook } from "./sources";

// The web console on this machine only (127.0.0.1, no password): CONSOLE_PORT=0 picks a free port.
const consolePort = Number(process.env.CONSOLE_PORT ?? 9400);

// Starts every sample endpoint on one server, then stops gracefully on Ctrl-C or SIGTERM.
bootstrap(AppModule, { console: { port: consolePort } }).then(
  (app) => {
    // Development values are named at start; with NODE_ENV=production they are refused.
    if (developmentValuesInUse.length > 0) {
      app.logger.warn({ variables: developmentValuesInUse }, "unset, so development values are in use");
    }
    // Only the development token is printed: a token from the environment stays out of logs.
    if (developmentValuesInUse.includes("ORDERS_TOKEN")) {
      app.logger.info({ url: ordersHook.url, header: `authorization: Bearer ${ORDERS_TOKEN}` }, "orders endpoint needs this header");
    }
    return app.run();
  },
  (error: Error) => {
    console.error(`cannot start: ${error.message}`);
    process.exit(1);
  },
);
