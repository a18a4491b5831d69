import { createServer } from 'node:net';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { BlockedAddressError } from './lookup.ts';
import { describeNetworkError } from './network-errors.ts';

const coded = (code: string, message = `${code} happened`) => Object.assign(new Error(message), { code });

describe('describeNetworkError', () => {
  // Guarantee: the codes partners meet most are told in words, certificate problems included.
  it.each([
    ['ECONNREFUSED', 'connection refused'],
    ['ENOTFOUND', 'host not found'],
    ['ETIMEDOUT', 'connect timed out'],
    ['UND_ERR_HEADERS_TIMEOUT', 'timed out waiting for the response'],
    ['CERT_HAS_EXPIRED', 'TLS certificate expired'],
    ['DEPTH_ZERO_SELF_SIGNED_CERT', 'self-signed TLS certificate'],
    ['ERR_TLS_CERT_ALTNAME_INVALID', 'TLS certificate does not match the host'],
  ])('%s reads "%s"', (code, text) => {
    expect(describeNetworkError(coded(code))).toBe(text);
  });

  // Guarantee: a closed socket names the other side as the caller calls it.
  it('names the peer that closed the connection', () => {
    expect(describeNetworkError(coded('UND_ERR_SOCKET'))).toBe('connection closed by the server');
    expect(describeNetworkError(coded('UND_ERR_SOCKET'), 'receiver')).toBe(
      'connection closed by the receiver',
    );
  });

  // Guarantee: nothing is lost for what the table does not know.
  it('keeps unknown codes, causes and blocked addresses', () => {
    expect(describeNetworkError(coded('EPROTO', 'wrong version number'))).toBe(
      'EPROTO: wrong version number',
    );
    const wrapped = new Error('fetch failed', { cause: coded('ECONNRESET') });
    expect(describeNetworkError(wrapped)).toBe('fetch failed: connection reset');
    const blocked = new BlockedAddressError('internal.example', '10.0.0.1', 'private');
    expect(describeNetworkError(blocked)).toBe(blocked.message);
    expect(describeNetworkError('gone')).toBe('gone');
    expect(describeNetworkError(new Error(''))).toBe('unknown error');
  });

  // Guarantee: a real undici failure (nobody listening) reads as a refused connection.
  it('reads a real refused connection', async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const error = await request(`http://127.0.0.1:${port}/`).catch((e: unknown) => e);
    expect(describeNetworkError(error)).toBe('connection refused');
  });
});
