import { bootstrap } from "webhook-tasks";
import { AppModule } from "./app.module";
import { ORDERS_TOKEN, ordersHook } from "./sources";

// Starts every sample endpoint on one server, then stops gracefully on Ctrl-C or SIGTERM.
bootstrap(AppModule).then(
  (app) => {
    // Only the development token is printed: a token from the environment stays out of logs.
    if (process.env.ORDERS_TOKEN === undefined) {
      app.logger.info({ url: ordersHook.url, header: `authorization: Bearer ${ORDERS_TOKEN}` }, "orders endpoint needs this header");
    }
    return app.run();
  },
  (error: Error) => {
    console.error(`cannot start: ${error.message}`);
    process.exit(1);
  },
);
