import { api } from '@svc/testing';
import { type Stack, startStack } from '@svc/testing/stack';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * An embed session's `allowed_origins` end up in the widget page's CSP (`frame-ancestors`), so each
 * must be an origin exactly as the URL standard serializes it, with a plain host (issue 23, item 13):
 * `;`, `,` or `"` would rewrite the policy.
 */
let stack: Stack;
let partner: ReturnType<typeof api>;
let workspace: string;

beforeAll(async () => {
  stack = await startStack();
  partner = api(stack.gateway.url, (await stack.createPartner()).key);
  workspace = (await partner('POST', '/v1/workspaces', { name: 'Origins' })).body.id;
});
afterAll(() => stack.stop());

const REFUSED = [
  'https://a.example;script-src *',
  'https://a.example;script-src',
  'https://a.example, https://b.example',
  'https://a.example,b.example',
  '"https://a.example"',
  'https://a.example"',
  'https://a.example/',
  'https://user@a.example',
  'https://A.EXAMPLE',
  'javascript:alert(1)',
  'https://a.example:443',
  'http://localhost:80',
  'https://*.example',
  'https://a_b.example',
  ' https://a.example',
  'https://a.example?x',
  'https://a.example#x',
  'null',
  `https://${'a'.repeat(300)}.example`,
];

describe('allowed_origins takes serialized origins only', () => {
  // Guarantee: each origin not in its serialized form (or with a host CSP cannot hold) is 400
  // validation_error naming its item, and no session is minted.
  it.each(REFUSED)('refuses %j', async (origin) => {
    const before = await stack.identity.prisma.embedSession.count();
    const res = await partner('POST', '/v1/embed-sessions', {
      workspace,
      allowed_origins: ['https://ok.example', origin],
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'validation_error', field: 'allowed_origins.1' });
    expect(await stack.identity.prisma.embedSession.count()).toBe(before);
  });

  // Guarantee: serialized https origins, and http on loopback in development, are kept as sent.
  it('accepts serialized origins', async () => {
    const origins = ['https://a.example', 'http://localhost:3000', 'https://app.partner.example:8443'];
    const res = await partner('POST', '/v1/embed-sessions', { workspace, allowed_origins: origins });
    expect(res.status).toBe(201);
    expect(res.body.allowed_origins).toEqual(origins);
  });
});
