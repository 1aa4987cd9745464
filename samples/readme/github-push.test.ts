import assert from "node:assert/strict";
import { test } from "node:test";
import { signRequest, testApp } from "webhook-tasks/testing";
import { app, GH_SECRET, github } from "./github-push";

test("a signed push is summarised onto the pushes queue", async () => {
  const t = await testApp(app); // memory store, free ports
  try {
    const body = JSON.stringify({ ref: "refs/heads/main", repository: { full_name: "octo/repo" }, commits: [{}, {}] });
    const headers = { "content-type": "application/json", "x-github-event": "push", ...signRequest("github", { secret: GH_SECRET, body }) };
    const run = await t.send(github, { body, headers });
    assert.equal(run.status, 202);
    assert.deepEqual(run.emitted, { repository: "octo/repo", branch: "main", commits: 2 });
  } finally {
    await t.stop();
  }
});
