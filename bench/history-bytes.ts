/**
 * Bytes per event of the embedded store's history: N webhook events of the bench's 312-byte
 * JSON body, with the headers the receiver keeps and one successful run each, written through
 * the store's history and measured with size(). Run: `npm run build && node dist/bench/history-bytes.js`.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { EmbeddedStore } from "../src/store/embedded/embedded-store";
import type { EventNote } from "../src/store/history";
import { jsonBody, SMALL_BODY_BYTES } from "./payload";

const EVENTS = Number(process.env.EVENTS ?? 20_000);

/** What the bench's load generator sends, as the receiver keeps it; and a GitHub delivery's headers. */
const HEADER_SETS: Record<string, Record<string, string>> = {
  bench: { host: "127.0.0.1:41234", "content-type": "application/json", "content-length": String(SMALL_BODY_BYTES) },
  github: {
    host: "hooks.example.com",
    "user-agent": "GitHub-Hookshot/8f9a2c1",
    "content-type": "application/json",
    "content-length": String(SMALL_BODY_BYTES),
    accept: "*/*",
    "x-github-event": "push",
    "x-github-delivery": "72d3162e-cc78-11e3-81ab-4c9367dc0958",
    "x-github-hook-id": "292430182",
    "x-github-hook-installation-target-id": "79929171",
    "x-github-hook-installation-target-type": "repository",
    "x-hub-signature": "[redacted]",
    "x-hub-signature-256": "[redacted]",
  },
};

async function measure(name: string, headers: Record<string, string>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "history-bytes-"));
  const store = new EmbeddedStore({ dir });
  await store.open();
  try {
    const raw = Buffer.from(jsonBody(SMALL_BODY_BYTES));
    const start = Date.now() - EVENTS;
    for (let i = 0; i < EVENTS; i++) {
      const id = randomUUID();
      const receivedAt = start + i;
      const note: EventNote = {
        id,
        origin: { kind: "webhook", source: "github" },
        name: "push",
        receivedAt,
        deliveries: [{ task: "handle", queue: "webhook:handle", messageId: id }],
        payload: { body: JSON.parse(raw.toString()), headers, query: {}, method: "POST", path: "/github", client: "127.0.0.1", received_at: receivedAt / 1000 },
        raw,
      };
      store.history.noteEvent(note);
      store.history.noteRun({ eventId: id, run: { task: "handle", attempt: 1, startedAt: receivedAt + 1, durationMs: 0.4, outcome: "success" }, status: "succeeded" });
      if (i % 1_000 === 999) await store.history.flush();
    }
    await store.history.flush();
    const { events, bytes } = await store.history.size();
    console.log(`${name}: ${events} events, ${bytes} bytes, ${(bytes / events).toFixed(0)} bytes per event`);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  for (const [name, headers] of Object.entries(HEADER_SETS)) await measure(name, headers);
}

void main();
