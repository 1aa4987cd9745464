import { join } from "node:path";
import type { CoreApp } from "../../src/app/core-app";
import { isSource } from "../../src/sources/source";

/** Compiled apps of every kind, as `--module` reads them (test/fixtures/cli). */
export const CLI_FIXTURES = join(__dirname, "../../../test/fixtures/cli");

/**
 * Imports a fixture app afresh with `env` set while its top-level code runs (it reads its
 * store and secret there), and returns the CoreApp it exports as `app`.
 */
export function loadFixtureApp(file: string, env: Record<string, string>): CoreApp {
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  Object.assign(process.env, env);
  const path = require.resolve(join(CLI_FIXTURES, file));
  delete require.cache[path];
  try {
    return (require(path) as { app: CoreApp }).app;
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

/**
 * Runs the app for real: posts `body` (with `headers`) to the webhook of each task named in
 * `posts`, waits until `deadLetters` events died, then stops the app (its store keeps them).
 */
export async function runUntilDead(app: CoreApp, posts: Record<string, { body: unknown; headers?: Record<string, string> }>, deadLetters: number): Promise<void> {
  let dead = 0;
  const died = new Promise<void>((resolve) => app.on("deadLetter", () => {
    if (++dead === deadLetters) resolve();
  }));
  await app.start();
  try {
    for (const [task, { body, headers }] of Object.entries(posts)) {
      const source = app.tasks.find((t) => t.name === task)?.source;
      if (!isSource(source) || !("url" in source)) throw new Error(`task ${task} has no webhook`);
      const response = await fetch(String(source.url), { method: "POST", body: JSON.stringify(body), headers: { "content-type": "application/json", ...headers } });
      if (response.status !== 202) throw new Error(`${task}: HTTP ${response.status} ${await response.text()}`);
    }
    await died;
  } finally {
    await app.stop();
  }
}
