import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, saneRequestId, withRequestId } from './index.ts';

function capture() {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(String(chunk)));
      done();
    },
  });
  return { lines, logger: createLogger('test', { destination }) };
}

describe('logging', () => {
  // Guarantee: every line written while handling a request carries its id.
  it('adds the request id of the current context to every line', async () => {
    const { lines, logger } = capture();
    await withRequestId('req_abc', async () => {
      await Promise.resolve();
      logger.info('inside');
    });
    logger.info('outside');
    expect(lines[0]).toMatchObject({ msg: 'inside', request_id: 'req_abc', service: 'test' });
    expect(lines[1]).not.toHaveProperty('request_id');
  });

  // Guarantee: a credential logged by mistake is censored.
  it('redacts tokens and authorization headers', () => {
    const { lines, logger } = capture();
    logger.info({ headers: { authorization: 'Bearer svc_live_x' }, account: { token: 'EAAB' } }, 'x');
    expect(JSON.stringify(lines[0])).not.toMatch(/svc_live_x|EAAB/);
  });

  it('keeps only sane caller request ids', () => {
    expect(saneRequestId('abc-123')).toBe('abc-123');
    expect(saneRequestId('has space')).toBeUndefined();
    expect(saneRequestId('x'.repeat(200))).toBeUndefined();
    expect(saneRequestId(undefined)).toBeUndefined();
  });
});
