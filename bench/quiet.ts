import { userProcessSeconds } from "./proc-stats";

/** Cores kept busy by everything on the machine over the next `ms`. */
export async function busyCores(ms: number): Promise<number> {
  const before = userProcessSeconds();
  await new Promise((resolve) => setTimeout(resolve, ms));
  return (userProcessSeconds() - before) / (ms / 1000);
}

/**
 * On a shared machine, waits (at most `maxSeconds`) until other work leaves the cores nearly
 * idle, so that a measurement does not start in the middle of someone else's burst.
 * Returns the busy cores last seen.
 */
export async function waitForQuiet(maxSeconds: number, threshold = 0.15): Promise<number> {
  const deadline = Date.now() + maxSeconds * 1000;
  let busy = await busyCores(500);
  while (busy > threshold && Date.now() < deadline) busy = await busyCores(500);
  return busy;
}
