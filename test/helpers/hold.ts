/**
 * Calls held in flight on purpose: once `hold()` is called, `pass()` waits until the function
 * it returned is called; `held` counts the calls waiting now.
 */
export class Hold {
  held = 0;
  private gate: Promise<void> | undefined;

  hold(): () => void {
    let open!: () => void;
    this.gate = new Promise<void>((resolve) => (open = resolve));
    return () => {
      this.gate = undefined;
      open();
    };
  }

  async pass(): Promise<void> {
    if (this.gate === undefined) return;
    this.held++;
    try {
      await this.gate;
    } finally {
      this.held--;
    }
  }
}
