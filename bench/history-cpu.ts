import { feedMainShape, type NoteSink } from "./history-notes";
import { threadTicks, TICK_US } from "./thread-ticks";

/** A history as the CPU micro-benches drive it. */
export interface MeasuredHistory extends NoteSink {
  flush(): Promise<void>;
  size(): Promise<{ events: number; bytes: number }>;
}

/**
 * Feeds the main case's notes at `rate` requests a second (2 s of warm-up, then `seconds`
 * measured, each ended by a flush) and prints the CPU per request, on the main thread and on
 * the others (a store's writer thread, the GC's helpers), and the history's bytes per event.
 */
export async function measureHistoryCpu(history: MeasuredHistory, rate: number, seconds: number): Promise<void> {
  await feedMainShape(history, rate, 2_000); // warm-up: storage opened, the code optimized
  await history.flush();
  const ticks = threadTicks();
  const cpu = process.cpuUsage();
  const n = await feedMainShape(history, rate, seconds * 1_000);
  await history.flush();
  const used = process.cpuUsage(cpu);
  const after = threadTicks();
  const size = await history.size();
  const us = (x: number) => (x / n).toFixed(1);
  console.log(
    `${n} requests in ${seconds} s: ${us(used.user + used.system)} µs of CPU per request (user ${us(used.user)}, system ${us(used.system)}; ` +
      `main thread ${us((after.main - ticks.main) * TICK_US)}, other threads ${us((after.other - ticks.other) * TICK_US)}); ${Math.round(size.bytes / size.events)} bytes per event`,
  );
}
