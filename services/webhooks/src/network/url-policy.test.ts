import { ServiceError } from '@svc/errors';
import type { Resolver } from '@svc/net';
import { describe, expect, it } from 'vitest';
import { assertResolvesPublic, parseWebhookUrl } from './url-policy.ts';

function refusal(run: () => unknown): { code: string; field?: string; message: string } | undefined {
  try {
    run();
  } catch (error) {
    if (error instanceof ServiceError)
      return { code: error.code, field: error.field, message: error.message };
    throw error;
  }
  return undefined;
}

describe('webhook URL rules', () => {
  // Guarantee: outside development only https to a public host is accepted, and refusals name `url`.
  it.each([
    ['not a url', 'absolute'],
    ['ftp://example.com/hook', 'https'],
    ['http://example.com/hook', 'https'],
    ['http://localhost:3000/hook', 'https'],
    ['https://user:pass@example.com/hook', 'credentials'],
    ['https://127.0.0.1/hook', 'loopback'],
    ['https://10.0.0.1/hook', 'private'],
    ['https://169.254.169.254/latest/meta-data', 'link-local'],
    ['https://[::1]/hook', 'loopback'],
    ['https://[::ffff:127.0.0.1]/hook', 'loopback'],
    ['https://localhost/hook', 'loopback'],
    ['https://api.localhost/hook', 'loopback'],
    [`https://example.com/${'x'.repeat(2100)}`, 'longer'],
  ])('refuses %s in production', (url, words) => {
    const error = refusal(() => parseWebhookUrl(url, false));
    expect(error).toMatchObject({ code: 'validation_error', field: 'url' });
    expect(error?.message).toContain(words);
  });

  // Guarantee: a public https URL is accepted as given (fragment dropped).
  it('accepts a public https URL', () => {
    expect(parseWebhookUrl('https://hooks.example.com:8443/in?x=1#frag', false).href).toBe(
      'https://hooks.example.com:8443/in?x=1',
    );
  });

  // Guarantee: development allows http only to loopback, and still refuses plain http elsewhere.
  it('allows http to loopback only in development', () => {
    expect(parseWebhookUrl('http://127.0.0.1:4000/h', true).href).toBe('http://127.0.0.1:4000/h');
    expect(parseWebhookUrl('http://localhost:4000/h', true).host).toBe('localhost:4000');
    expect(parseWebhookUrl('http://[::1]:4000/h', true).hostname).toBe('[::1]');
    expect(refusal(() => parseWebhookUrl('http://example.com/h', true))).toMatchObject({ field: 'url' });
    expect(refusal(() => parseWebhookUrl('http://10.0.0.1/h', true))).toMatchObject({ field: 'url' });
  });

  // Guarantee: a host name that resolves into a private network is refused when saved.
  it('refuses a host name resolving to a private address', async () => {
    const dns: Record<string, string> = { 'inside.test': '10.0.0.1', 'meta.test': '169.254.169.254' };
    const resolver: Resolver = async (host) => {
      const address = dns[host];
      if (!address) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
      return [{ address, family: 4 }];
    };
    for (const host of Object.keys(dns)) {
      await expect(assertResolvesPublic(new URL(`https://${host}/h`), resolver)).rejects.toMatchObject({
        code: 'validation_error',
        field: 'url',
      });
    }
    // Not resolvable yet: accepted, the connect-time check still applies to every delivery.
    await expect(assertResolvesPublic(new URL('https://unknown.test/h'), resolver)).resolves.toBeUndefined();
  });
});
