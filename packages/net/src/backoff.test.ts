import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { pollWithBackoff } from './backoff.ts';

const backoff = { firstDelayMs: 100, maxDelayMs: 400, deadlineMs: 2_000 };

/** A check that answers null until its `answerAt`-th call, and notes when each call came. */
function recordingCheck(answerAt = Number.POSITIVE_INFINITY) {
  const calls: number[] = [];
  const started = Date.now();
  const check = async () => {
    calls.push(Date.now() - started);
    return calls.length >= answerAt ? 'ready' : null;
  };
  return { calls, check };
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('pollWithBackoff', () => {
  // Guarantee: the waits double from the first delay and stop growing at the cap.
  it('doubles the wait up to the cap and returns the first answer', async () => {
    const { calls, check } = recordingCheck(6);
    const result = pollWithBackoff(check, backoff);
    await vi.runAllTimersAsync();
    expect(await result).toBe('ready');
    expect(calls).toEqual([0, 100, 300, 700, 1_100, 1_500]);
  });

  // Guarantee: with no answer, it gives up with null before a wait would pass the deadline.
  it('gives up with null at the deadline', async () => {
    const { calls, check } = recordingCheck();
    const result = pollWithBackoff(check, backoff);
    await vi.runAllTimersAsync();
    expect(await result).toBeNull();
    expect(calls).toEqual([0, 100, 300, 700, 1_100, 1_500, 1_900]);
  });

  // Guarantee: an answer at once costs no wait, and a failing check ends the poll with its error.
  it('answers at once and lets errors through', async () => {
    const { calls, check } = recordingCheck(1);
    await expect(pollWithBackoff(check, backoff)).resolves.toBe('ready');
    expect(calls).toEqual([0]);
    await expect(pollWithBackoff(() => Promise.reject(new Error('refused')), backoff)).rejects.toThrow(
      'refused',
    );
  });
});
