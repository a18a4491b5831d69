import { describe, expect, it } from 'vitest';
import { OutageBreaker } from '../src/breaker.ts';
import { CallPacing, spacingFor } from '../src/pacing.ts';

const usage = (app: number, business: Record<string, [number, number]> = {}) => ({
  app: { call_count: app, total_cputime: 1, total_time: 1 },
  businessUseCase: Object.fromEntries(
    Object.entries(business).map(([id, [percent, minutes]]) => [
      id,
      [
        {
          type: 'pages',
          call_count: percent,
          total_cputime: 1,
          total_time: 1,
          estimated_time_to_regain_access: minutes,
        },
      ],
    ]),
  ),
  retryAfterSeconds: null,
});

// Guarantee: calls are spaced out before Meta's limit is reached, wider the closer it is, and a
// throttled account's calls wait for the time Meta gave instead of being sent.
describe('CallPacing', () => {
  it('does not slow calls below 75% and spaces them up to 2 s at the limit', () => {
    expect(spacingFor(74)).toBe(0);
    expect(spacingFor(87.5)).toBe(1_000);
    expect(spacingFor(100)).toBe(2_000);
    expect(spacingFor(250)).toBe(2_000);
  });

  it('queues concurrent calls of a busy account one spacing apart', () => {
    const pacing = new CallPacing();
    pacing.record(usage(10, { '111': [90, 0] }), 0);
    const waits = [1, 2, 3].map(() => pacing.before('111', 0));
    expect(waits).toEqual([{ waitMs: 0 }, { waitMs: 1_200 }, { waitMs: 2_400 }]);
    // Another account of the same app is not held back by it.
    expect(pacing.before('222', 0)).toEqual({ waitMs: 0 });
  });

  it('spaces every call when the app itself nears its limit', () => {
    const pacing = new CallPacing();
    pacing.record(usage(100), 0);
    expect(pacing.before('333', 0)).toEqual({ waitMs: 0 });
    expect(pacing.before(undefined, 0)).toEqual({ waitMs: 2_000 });
  });

  it('holds a throttled account until the time Meta gave, then lets it through', () => {
    const pacing = new CallPacing();
    pacing.record(usage(10, { '111': [100, 2] }), 1_000);
    expect(pacing.before('111', 1_000)).toEqual({ throttledUntil: 121_000 });
    expect(pacing.before('111', 121_000)).toHaveProperty('waitMs');
    pacing.record(usage(10, { '111': [20, 0] }), 121_500);
    expect(pacing.before('111', 121_500)).toEqual({ waitMs: 0 });
    expect(pacing.percentages()).toEqual({ app: 10, business: 20 });
  });
});

// Guarantee: during a Meta outage calls stop after a few failures in a row and resume by one probe,
// so work is deferred instead of failing against a network that is down.
describe('OutageBreaker', () => {
  const policy = { failures: 3, cooldownMs: 1_000, maxCooldownMs: 4_000 };

  it('opens after failures in a row and lets one probe through after the cooldown', () => {
    const breaker = new OutageBreaker(policy);
    for (let i = 0; i < 3; i++) breaker.failed(0, false);
    expect(breaker.admit(500)).toEqual({ retryAt: 1_000 });
    expect(breaker.admit(1_000)).toEqual({ probe: true });
    expect(breaker.admit(1_001)).toHaveProperty('retryAt');
    breaker.succeeded();
    expect(breaker.admit(1_002)).toEqual({ probe: false });
  });

  it('doubles the cooldown while the probes fail, up to its bound', () => {
    const breaker = new OutageBreaker(policy);
    for (let i = 0; i < 3; i++) breaker.failed(0, false);
    let now = 1_000;
    const pauses: number[] = [];
    for (let i = 0; i < 4; i++) {
      expect(breaker.admit(now)).toEqual({ probe: true });
      breaker.failed(now, true);
      const next = breaker.admit(now);
      if (!('retryAt' in next)) throw new Error('the breaker should be open');
      pauses.push(next.retryAt - now);
      now = next.retryAt;
    }
    expect(pauses).toEqual([2_000, 4_000, 4_000, 4_000]);
  });

  it('a success between failures keeps it closed', () => {
    const breaker = new OutageBreaker(policy);
    breaker.failed(0, false);
    breaker.failed(0, false);
    breaker.succeeded();
    breaker.failed(0, false);
    expect(breaker.admit(0)).toEqual({ probe: false });
  });
});
