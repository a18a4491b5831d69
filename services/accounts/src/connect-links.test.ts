import { describe, expect, it } from 'vitest';
import { checkRedirectUrl } from './connect-links.ts';

describe('checkRedirectUrl', () => {
  // Guarantee: users are only sent back over https, or to the partner's own machine while developing.
  it('accepts https and loopback http only', () => {
    expect(checkRedirectUrl('https://partner.example/back?x=1')).toBe('https://partner.example/back?x=1');
    expect(checkRedirectUrl('http://localhost:3000/cb')).toBe('http://localhost:3000/cb');
    expect(checkRedirectUrl('http://127.0.0.1/cb')).toBe('http://127.0.0.1/cb');
    for (const bad of [
      'http://partner.example/',
      'javascript:alert(1)',
      'ftp://x/',
      '/relative',
      'https://u:p@x.example/',
    ])
      expect(() => checkRedirectUrl(bad), bad).toThrow(expect.objectContaining({ field: 'redirect_url' }));
  });
});
