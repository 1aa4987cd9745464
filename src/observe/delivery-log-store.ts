import { ForwardingStore } from "../store/forwarding-store";
import type { EmitRecord, Store } from "../store/store";
import { emitList } from "../store/store";

/**
 * A store that tells the debug delivery log what each completion emits (the ids of the emitted
 * events), before the run's outcome is reported; everything else passes straight through.
 */
export class DeliveryLogStore extends ForwardingStore {
  constructor(
    inner: Store,
    private readonly completing: (queue: string, id: string, emit: readonly EmitRecord[]) => void,
  ) {
    super(inner);
    const forwarded = this.completeNow;
    if (forwarded !== undefined) {
      this.completeNow = (queue, id, emit) => {
        if (emit !== undefined) this.completing(queue, id, emitList(emit));
        forwarded(queue, id, emit);
      };
    }
  }

  override complete(queue: string, id: string, emit?: EmitRecord | readonly EmitRecord[]): Promise<void> {
    if (emit !== undefined) this.completing(queue, id, emitList(emit));
    return this.inner.complete(queue, id, emit);
  }
}
