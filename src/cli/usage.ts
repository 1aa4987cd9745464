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
      --log-level <level>        trace | debug | info | warn | error | fatal | silent
                                 (overrides app.logLevel)
  check <worker.yaml>            Validate everything (schema, \${ENV} variables, handler
                                 modules and exports, routes) without listening; print a
                                 summary. Exit code 0 when the file is good, 1 otherwise.
      --json                     Print the summary as JSON
  events list <app>              The event history, newest first (50 a page), and the
                                 cursor of the next page
      --source <name>            Only events of one webhook source (its path without "/")
      --task <name>              Only events handed to one task (with --status: that
                                 task's delivery has the status)
      --status <status>          pending | succeeded | failed | dead | unrouted (no
                                 task took it)
      --since <time>             Received at or after: ISO time (2026-11-24T18:00:00Z)
                                 or a span before now (90s, 30m, 1h, 2d, 1w)
      --until <time>             Received before (same forms)
      --search <text>            An event id, a header value, or a JSON body field
                                 (repository.full_name=octo/repo)
      --limit <n>                Events per page, 1 to 500
      --cursor <cursor>          The next page, as the previous one printed it
      --json                     Print JSON instead of a table
  events show <id> <app>         One event: deliveries, every run with its error and
                                 stack, parent, replays, children, headers (secrets
                                 redacted) and body
      --json                     Print JSON (the raw body as base64)
  events replay <id> <app>       Queue the event again for its tasks, as a new event
                                 linked to it, with fresh attempts; the app's tasks run
                                 it once the app runs. With --store, refused for a task
                                 whose concurrency or rate key is app code
      --task <name>              Only for this task (an unrouted event: the task to
                                 send it to)
  events replay <filter> <app>   Replay every event the filter matches (--source,
                                 --status, --since, --until, --search, as for list)
      --task <name>              Only events handed to this task, for it alone (with
                                 --status unrouted: the task to send them to)
      --dry-run                  Print how many would be replayed; queue nothing
      --rate <n>                 At most n a second (default 50)
      --json                     Print JSON
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

Exit codes: 0 success, 1 failure (bad file, port in use, unknown dead letter or event,
history off, ...), 2 usage error.
Set WEBHOOK_TASKS_DEBUG=1 to print stack traces of unexpected errors.`;
