import { describe, expect, it } from 'vitest';
import { eventually } from './unique.ts';

describe('eventually', () => {
  // Guarantee: a check that never answers fails the wait soon after its deadline (here 200 ms
  // and as long again), saying so, instead of hanging the test until its own timeout.
  it('fails after its deadline when a check hangs', async () => {
    const started = Date.now();
    const hanging = eventually(() => new Promise<undefined>(() => {}), 200);
    await expect(hanging).rejects.toThrow('condition not met within 200 ms: its last check had not answered');
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  // Guarantee: a check that throws is asked again, and its last error is the cause of the failure.
  it('asks again after a failed check, and answers the first value', async () => {
    let calls = 0;
    const value = await eventually(() => {
      calls += 1;
      if (calls < 3) throw new Error(`not yet ${calls}`);
      return calls;
    });
    expect(value).toBe(3);
    // The check under way at the deadline may still answer.
    const late = await eventually(
      () => new Promise<string>((resolve) => setTimeout(resolve, 150, 'late')),
      100,
    );
    expect(late).toBe('late');
    const failed = await eventually(() => {
      throw new Error('never');
    }, 100).catch((error: Error) => error);
    expect(failed).toMatchObject({ message: 'condition not met within 100 ms', cause: { message: 'never' } });
  });
});
