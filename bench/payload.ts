/**
 * The request bodies every server receives: a GitHub-like `push` notification padded to an
 * exact size, so that each case sends the same bytes to every server.
 */

/** The small body of the main case: 312 bytes of JSON, a typical webhook notification. */
export const SMALL_BODY_BYTES = 312;
/** The large body case: 64 KiB of JSON (a big push payload, a batch of records). */
export const LARGE_BODY_BYTES = 64 * 1024;

/** A JSON object of exactly `bytes` bytes (ASCII), shaped like a webhook notification. */
export function jsonBody(bytes: number): string {
  const base = {
    action: "push",
    id: "f3b1c2d4-6a7e-4c1f-9b0a-2d3e4f5a6b7c",
    repository: { id: 123456789, full_name: "octo-org/webhook-tasks", private: false },
    sender: { login: "octocat", id: 583231, type: "User" },
    ref: "refs/heads/main",
    head_commit: { id: "7fd1a60b01f91b314f59955a4e4d4e80d8edf11d", message: "" },
  };
  const empty = JSON.stringify(base).length;
  if (bytes < empty) throw new Error(`a body of ${bytes} bytes is smaller than the ${empty}-byte skeleton`);
  base.head_commit.message = "x".repeat(bytes - empty);
  const text = JSON.stringify(base);
  if (Buffer.byteLength(text) !== bytes) throw new Error(`body is ${Buffer.byteLength(text)} bytes, wanted ${bytes}`);
  return text;
}
