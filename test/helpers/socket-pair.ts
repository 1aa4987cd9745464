import type { Socket } from "node:net";

/** A proxy's two ends close together: an error or a close of either destroys both. */
export function closeTogether(client: Socket, upstream: Socket): void {
  const end = () => {
    client.destroy();
    upstream.destroy();
  };
  for (const socket of [client, upstream]) {
    socket.on("error", end);
    socket.on("close", end);
  }
}
