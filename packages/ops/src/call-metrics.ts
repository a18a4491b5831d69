import type { Counter, Histogram, LabelValues } from 'prom-client';

interface Series {
  count(): void;
  time(seconds: number): void;
}

/**
 * A counter of answered calls and a histogram of their duration, observed together. Each label
 * set's series are made once and kept by `key` (the label values joined): prom-client would
 * otherwise hash the labels again on every observation. Keys are bounded by what the labels are
 * (route templates, methods, status codes), never by requests.
 */
export class CallMetrics<Counted extends string, Timed extends string> {
  private readonly series = new Map<string, Series>();

  constructor(
    private readonly counter: Counter<Counted>,
    private readonly histogram: Histogram<Timed>,
  ) {}

  observe(
    key: string,
    labels: () => { counted: LabelValues<Counted>; timed: LabelValues<Timed> },
    seconds: number,
  ): void {
    let series = this.series.get(key);
    if (!series) {
      const { counted, timed } = labels();
      const count = this.counter.labels(counted);
      const time = this.histogram.labels(timed);
      series = { count: () => count.inc(), time: (s) => time.observe(s) };
      this.series.set(key, series);
    }
    series.count();
    series.time(seconds);
  }
}
