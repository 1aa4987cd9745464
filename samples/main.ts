import { bootstrap } from "webhook-tasks";
import { AppModule } from "./app.module";

// Starts every sample endpoint on one server, then stops gracefully on Ctrl-C or SIGTERM.
bootstrap(AppModule).then(
  (app) => app.run(),
  (error: Error) => {
    console.error(`cannot start: ${error.message}`);
    process.exit(1);
  },
);
