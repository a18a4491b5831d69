// The part of autocannon 9's programmatic API the bench uses (the package ships no types).
declare module 'autocannon' {
  export interface Options {
    url: string;
    connections?: number;
    duration?: number;
    headers?: Record<string, string>;
    method?: string;
    body?: string;
  }
  export interface Histogram {
    average: number;
    mean: number;
    stddev: number;
    min: number;
    max: number;
    total: number;
    p50: number;
    p90: number;
    p99: number;
  }
  export interface Result {
    duration: number;
    errors: number;
    timeouts: number;
    non2xx: number;
    resets: number;
    '2xx': number;
    '4xx': number;
    '5xx': number;
    latency: Histogram;
    requests: Histogram & { sent: number };
  }
  function autocannon(options: Options): Promise<Result>;
  export default autocannon;
}
