/**
 * The sandbox's notion of "now". Token lifetimes, container processing, the 24-hour messaging
 * window and the publishing quota all read this clock, so tests move time forward instead of sleeping.
 */
export class Clock {
  private offsetMs = 0;

  now(): number {
    return Date.now() + this.offsetMs;
  }

  advance(ms: number): void {
    this.offsetMs += ms;
  }

  reset(): void {
    this.offsetMs = 0;
  }
}

/** Graph's timestamp format: ISO-8601 with a `+0000` offset and no milliseconds. */
export function graphTime(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 19)}+0000`;
}

export function unixSeconds(ms: number): number {
  return Math.floor(ms / 1000);
}
