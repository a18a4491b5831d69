import { describe, expect, it } from 'vitest';
import { inboxPrefixFor, natsCredentials } from './credentials.ts';

describe('NATS credentials from the environment', () => {
  // Guarantee: development needs none (the local server takes anyone, replies keep `_INBOX`);
  // production's user and password become the connection's, with inboxes of the service's own.
  it('reads none, a user with its password, or a token', () => {
    expect(natsCredentials({})).toEqual({});
    expect(inboxPrefixFor('inbox', {})).toBeUndefined();
    const user = natsCredentials({ NATS_USER: 'inbox', NATS_PASSWORD: 'secret' });
    expect(user).toEqual({ user: 'inbox', pass: 'secret' });
    expect(inboxPrefixFor('inbox', user)).toBe('_INBOX_inbox');
    expect(natsCredentials({ NATS_TOKEN: 't0ken' })).toEqual({ token: 't0ken' });
  });

  // Guarantee: a half-set or ambiguous configuration stops the start with a reason, never connects
  // anonymously by mistake.
  it('refuses a user without password, or two kinds at once', () => {
    expect(() => natsCredentials({ NATS_USER: 'inbox' })).toThrow('NATS_USER and NATS_PASSWORD');
    expect(() => natsCredentials({ NATS_PASSWORD: 'secret' })).toThrow('NATS_USER and NATS_PASSWORD');
    expect(() => natsCredentials({ NATS_USER: 'a', NATS_PASSWORD: 'b', NATS_TOKEN: 'c' })).toThrow('one of');
    expect(() => natsCredentials({ NATS_CREDS_FILE: '/nonexistent/user.creds' })).toThrow();
  });
});
