import { CoreApp, EmbeddedStore } from "webhook-tasks";

export const store = new EmbeddedStore({
  dir: ".data/orders",
  journal: { maxMessages: 10_000, maxBytes: 64 * 1024 * 1024, segmentBytes: 64 * 1024 * 1024 },
});
export const app = new CoreApp("orders", { store });
