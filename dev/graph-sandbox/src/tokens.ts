import type { Token } from './store.ts';
import type { World } from './world.ts';

/**
 * Token lifetimes (facts §1.7): short-lived user tokens live SANDBOX_SHORT_TOKEN_TTL_S, long-lived
 * ones SANDBOX_LONG_TOKEN_TTL_S; a page token from a long-lived user token never expires, one from
 * a short-lived user token expires with it.
 */
export function mintUserToken(world: World, userId: string, scopes: string[], longLived: boolean): Token {
  const now = world.clock.now();
  const ttl = longLived ? world.config.longTokenTtlS : world.config.shortTokenTtlS;
  const token: Token = {
    value: world.ids.token(),
    kind: 'user',
    userId,
    pageId: null,
    scopes,
    issuedAt: now,
    expiresAt: now + ttl * 1000,
    longLived,
    invalid: null,
  };
  world.store.tokens.set(token.value, token);
  return token;
}

export function pageTokenFor(world: World, userToken: Token, pageId: string): Token {
  const key = `${userToken.value}:${pageId}`;
  const existing = world.store.pageTokenFor.get(key);
  const known = existing ? world.store.tokens.get(existing) : undefined;
  if (known) return known;
  const token: Token = {
    value: world.ids.token(),
    kind: 'page',
    userId: userToken.userId,
    pageId,
    scopes: userToken.scopes,
    issuedAt: world.clock.now(),
    expiresAt: userToken.longLived ? null : userToken.expiresAt,
    longLived: userToken.longLived,
    invalid: null,
  };
  world.store.tokens.set(token.value, token);
  world.store.pageTokenFor.set(key, token.value);
  return token;
}

/** Every token of the user, page tokens included, stops working with the given 190 subcode. */
export function invalidateUserTokens(world: World, userId: string, reason: 458 | 463): void {
  for (const token of world.store.tokens.values()) if (token.userId === userId) token.invalid = reason;
}

/** The user removes the app: tokens die with 190/458 and the deauthorize callback is sent (facts §6). */
export async function deauthorizeUser(world: World, userId: string) {
  invalidateUserTokens(world, userId, 458);
  world.store.grants.delete(userId);
  return world.webhooks.sendDeauthorize(userId, world.clock.now());
}
