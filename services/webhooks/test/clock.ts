import type { Clock } from '../src/clock.ts';

/** A clock that moves only when told: the whole retry schedule runs in seconds. */
export class FakeClock implements Clock {
  constructor(private current = Date.parse('2030-01-01T00:00:00.000Z')) {}

  now(): Date {
    return new Date(this.current);
  }

  advance(ms: number): void {
    this.current += ms;
  }
}
