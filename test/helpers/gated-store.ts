import type { EmitRecord, QueuedMessage } from "../../src/index";
import { ForwardingStore } from "../../src/store/forwarding-store";

/**
 * A real store whose enqueues wait at a gate the test opens: the write is held open, so a test
 * can see what the app does (and does not answer) before its event is stored. Everything else
 * goes straight to the store underneath. (Wrap a store whose writes do not settle at once: the
 * gate makes every enqueue wait.)
 */
export class GatedStore extends ForwardingStore {
  /** Enqueue calls that reached the gate. */
  entered = 0;
  private opened!: () => void;
  private readonly gate = new Promise<void>((resolve) => (this.opened = resolve));

  /** Lets every held and later enqueue through. */
  openGate(): void {
    this.opened();
  }

  override async enqueue(queue: string, message: QueuedMessage, options?: { internal?: boolean }): Promise<void> {
    this.entered++;
    await this.gate;
    return this.inner.enqueue(queue, message, options);
  }

  override async enqueueAll(copies: readonly EmitRecord[], options?: { internal?: boolean }): Promise<void> {
    this.entered++;
    await this.gate;
    return this.inner.enqueueAll(copies, options);
  }
}
