import type { Metric, Registry } from "prom-client";

/** What prom-client's registry reads from a metric when it scrapes. */
interface Scraped {
  readonly name: string;
  readonly help: string;
  readonly type: "counter" | "histogram";
  readonly aggregator: "sum";
  readonly values: ReadonlyArray<{ readonly metricName?: string; readonly labels: Record<string, string | number>; readonly value: number }>;
}

/*
 * prom-client's own Counter and Histogram hash their label object on every call (a few
 * microseconds for a histogram): too much on the webhook path. These keep one series per
 * label-value key in a Map and hand prom-client plain values when it scrapes, so the
 * exposition is still written by the registry (escaping, content type, default labels).
 */

interface Series {
  readonly labels: Record<string, string | number>;
  value: number;
}

interface HistogramSeries {
  readonly labels: Record<string, string | number>;
  /** Observations per bucket (not cumulative); the last slot is above the highest bound. */
  readonly counts: Float64Array;
  sum: number;
  count: number;
}

abstract class ScrapedMetric {
  readonly aggregator = "sum" as const;

  constructor(
    readonly name: string,
    readonly help: string,
    registry: Registry,
  ) {
    // The registry only calls get() (and reset()); these classes are what it needs of a metric.
    registry.registerMetric(this as unknown as Metric);
  }

  abstract get(): Promise<Scraped>;
  abstract reset(): void;
}

/** A counter whose series are found by a key the caller builds from its label values. */
export class KeyedCounter extends ScrapedMetric {
  readonly type = "counter" as const;
  private readonly series = new Map<string, Series>();
  /** Goes up on every reset: callers that keep series drop them then. */
  resets = 0;

  /** Adds one to the series `key`; `labels` makes it the first time it is seen. */
  inc(key: string, labels: () => Record<string, string | number>): void {
    this.seriesOf(key, labels).value++;
  }

  /** The series `key` (made with `labels` the first time), for callers that keep it to count without a lookup. */
  seriesOf(key: string, labels: () => Record<string, string | number>): { value: number } {
    let series = this.series.get(key);
    if (series === undefined) this.series.set(key, (series = { labels: labels(), value: 0 }));
    return series;
  }

  async get(): Promise<Scraped> {
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values: [...this.series.values()].map((s) => ({ labels: s.labels, value: s.value })) };
  }

  reset(): void {
    this.series.clear();
    this.resets++;
  }
}

/** A histogram with one label, whose value is the series key. */
export class KeyedHistogram extends ScrapedMetric {
  readonly type = "histogram" as const;
  private readonly series = new Map<string, HistogramSeries>();

  constructor(
    name: string,
    help: string,
    registry: Registry,
    private readonly label: string,
    private readonly buckets: readonly number[],
  ) {
    super(name, help, registry);
  }

  observe(labelValue: string, value: number): void {
    let series = this.series.get(labelValue);
    if (series === undefined) this.series.set(labelValue, (series = { labels: { [this.label]: labelValue }, counts: new Float64Array(this.buckets.length + 1), sum: 0, count: 0 }));
    const { buckets } = this;
    let i = 0;
    while (i < buckets.length && value > buckets[i]) i++;
    series.counts[i]++;
    series.sum += value;
    series.count++;
  }

  async get(): Promise<Scraped> {
    const values: Array<Scraped["values"][number]> = [];
    for (const series of this.series.values()) {
      let cumulative = 0;
      this.buckets.forEach((bound, i) => {
        cumulative += series.counts[i];
        values.push({ metricName: `${this.name}_bucket`, labels: { ...series.labels, le: bound }, value: cumulative });
      });
      values.push({ metricName: `${this.name}_bucket`, labels: { ...series.labels, le: "+Inf" }, value: series.count });
      values.push({ metricName: `${this.name}_sum`, labels: series.labels, value: series.sum });
      values.push({ metricName: `${this.name}_count`, labels: series.labels, value: series.count });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  reset(): void {
    this.series.clear();
  }
}
