/** A command line the CLI cannot understand: exit code 2 and a pointer to --help. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

export const USAGE = `Usage: webhook-tasks <command> [options]

Commands:
  run <worker.yaml>              Start the app the file describes; SIGINT/SIGTERM stop it
                                 gracefully. Logs JSON lines on stdout; the "started" line
                                 lists the listeners' URLs.
      --log-level <level>        debug | info | warn | error | silent (overrides app.logLevel)
  check <worker.yaml>            Validate everything (schema, \${ENV} variables, handler
                                 modules and exports, routes) without listening; print a
                                 summary. Exit code 0 when the file is good, 1 otherwise.
      --json                     Print the summary as JSON
  dead-letters list <app>        List the dead letters
      --queue <name>             Only those of one queue
      --json                     Print JSON instead of a table
  dead-letters show <id> <app>   Show one dead letter: its error, attempts and event
                                 (secret headers redacted)
      --json                     Print JSON
  dead-letters replay <id|--all> <app>
                                 Put dead letters back on their queue, attempts reset; the
                                 app's task handles them once the app runs
  dead-letters purge <id|--all> <app>
                                 Delete dead letters for good
  status <app>                   Per queue: depth, waiting, in flight, age of the oldest
                                 message, dead letters, consumer (the app may be running)
      --json                     Print JSON instead of a table
      <app> is one of:
        <worker.yaml>            a YAML app (handler modules are not loaded)
        --module <file.js>       a compiled module exporting a CoreApp instance or a
                                 @Module class (it is imported: its top-level code runs)
        --store <url|dir>        a postgres:// URL (?schema= honoured) or an embedded data
                                 directory: the store alone, no app code imported and no
                                 secret needed; which task consumes a queue is then unknown
      The store is opened without consuming, used and closed; nothing listens.

  send <url>                     Sign a delivery as a sender would and send it to a running
                                 app; prints the answer. Exit code 0 for a 2xx answer.
      --preset <name>            github | stripe | slack | standard-webhooks | svix |
                                 shopify | twilio | meta | zoom (default: unsigned)
      --secret-env <VAR>         Environment variable holding the secret (with --preset)
      --file <payload>           Body from a file (JSON, form or text; content-type guessed)
      --data <text>              Body from the command line
      --header <name:value>      Extra header (repeatable; overrides the guessed ones)
      --method <method>          Default POST

Options:
  -h, --help                     Show this help
  -v, --version                  Show the version

Exit codes: 0 success, 1 failure (bad file, port in use, unknown dead letter, ...), 2 usage error.
Set WEBHOOK_TASKS_DEBUG=1 to print stack traces of unexpected errors.`;
