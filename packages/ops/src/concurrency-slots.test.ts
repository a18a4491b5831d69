import { describe, expect, it } from 'vitest';
import { ConcurrencySlots } from './concurrency-slots.ts';

/** An upload that holds its slot until `finish` is called. */
function held() {
  let finish = () => {};
  const done = new Promise<string>((resolve) => {
    finish = () => resolve('stored');
  });
  return { work: () => done, finish: () => finish() };
}

describe('ConcurrencySlots', () => {
  // Guarantee: a partner past its bound of work at once is refused with rate_limited (naming
  // the bound, with a retry time) while another partner still gets a slot; a finished upload
  // frees its slot.
  it('bounds uploads per partner', async () => {
    const slots = new ConcurrencySlots({ what: 'media uploads', perKey: 2, total: 10, retryAfterSeconds: 1 });
    const running = [held(), held()];
    const uploads = running.map((upload) => slots.run('partner_a', upload.work));
    const refusal = await slots.run('partner_a', async () => 'stored').catch((error: unknown) => error);
    expect(refusal).toMatchObject({ code: 'rate_limited', retryAfterSeconds: 1 });
    expect((refusal as Error).message).toContain('at most 2 per partner');
    await expect(slots.run('partner_b', async () => 'stored')).resolves.toBe('stored');
    running[0]?.finish();
    await uploads[0];
    await expect(slots.run('partner_a', async () => 'stored')).resolves.toBe('stored');
    running[1]?.finish();
    await uploads[1];
  });

  // Guarantee: past the process's bound in all, every partner is refused, naming that bound;
  // a failed upload frees its slot too.
  it('bounds uploads in all', async () => {
    const slots = new ConcurrencySlots({ what: 'media uploads', perKey: 2, total: 3, retryAfterSeconds: 1 });
    const running = [held(), held(), held()];
    const uploads = running.map((upload, n) => slots.run(`partner_${n}`, upload.work));
    const refusal = await slots.run('partner_x', async () => 'stored').catch((error: unknown) => error);
    expect(refusal).toMatchObject({ code: 'rate_limited' });
    expect((refusal as Error).message).toContain('at most 3 at the same time');
    for (const upload of running) upload.finish();
    await Promise.all(uploads);
    await expect(slots.run('partner_x', async () => Promise.reject(new Error('bad file')))).rejects.toThrow();
    await expect(slots.run('partner_x', async () => 'stored')).resolves.toBe('stored');
  });
});
