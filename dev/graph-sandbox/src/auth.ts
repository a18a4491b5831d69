import { hmacSha256Hex, safeEqual } from '@svc/crypto';
import {
  cannotParseToken,
  expiredToken,
  invalidParam,
  missingToken,
  notAuthorizedForObject,
  passwordChanged,
  permissionMissing,
  removedApp,
} from './graph-errors.ts';
import type { Token } from './store.ts';
import type { World } from './world.ts';

/** The caller of a Graph call: a user or page token, or the app itself (`{app-id}|{app-secret}`). */
export type Caller = { kind: 'app' } | Token;

/**
 * Validates a token the way Meta does (facts §1.7, §7.2): unknown → 190 without subcode, removed
 * app → 190/458, expired → 190/463; a wrong `appsecret_proof`, when one is sent, → 100.
 */
export function authenticate(world: World, value: string | undefined, proof: string | undefined): Caller {
  if (!value) throw missingToken();
  if (value === `${world.config.appId}|${world.config.appSecret}`) return { kind: 'app' };
  const token = world.store.tokens.get(value);
  if (!token) throw cannotParseToken();
  if (proof !== undefined && !safeEqual(proof, expectedProof(world.config.appSecret, token))) {
    throw invalidParam('Invalid appsecret_proof provided in the API argument');
  }
  const problem = tokenProblem(world, token);
  if (problem) throw problem;
  return token;
}

/**
 * The proof is a pure function of (app secret, token), and a client sends the same token on every
 * call, so it is computed once per token instead of one HMAC per request.
 */
const proofs = new WeakMap<Token, { secret: string; proof: string }>();

function expectedProof(secret: string, token: Token): string {
  const known = proofs.get(token);
  if (known?.secret === secret) return known.proof;
  const proof = hmacSha256Hex(secret, token.value);
  proofs.set(token, { secret, proof });
  return proof;
}

export function tokenProblem(world: World, token: Token) {
  const now = world.clock.now();
  if (token.invalid === 458) return removedApp(world.config.appId);
  if (token.invalid === 460) return passwordChanged();
  if (token.invalid === 463 || (token.expiresAt !== null && token.expiresAt <= now)) {
    return expiredToken(token.expiresAt ?? now, now);
  }
  return null;
}

export function requireScope(token: Token, scope: string, code: 10 | 200 = 200): void {
  if (!token.scopes.includes(scope)) throw permissionMissing(scope, code);
}

/** Is the caller allowed to act as this Page? A page token of the Page, or a user token the Page was granted to. */
export function assertPageAccess(world: World, caller: Caller, pageId: string): Token {
  if (caller.kind === 'app') throw notAuthorizedForObject();
  if (caller.kind === 'page' && caller.pageId === pageId) return caller;
  const grant = world.store.grants.get(caller.userId);
  if (caller.kind === 'user' && grant?.pageIds.includes(pageId)) return caller;
  throw notAuthorizedForObject();
}

/** An Instagram account is reached through its linked Page (FB Login). */
export function assertIgAccess(world: World, caller: Caller, igId: string): Token {
  const account = world.store.igAccounts.get(igId);
  if (!account) throw notAuthorizedForObject();
  return assertPageAccess(world, caller, account.pageId);
}

export function requirePageToken(caller: Caller, pageId: string, makeError: () => Error): Token {
  if (caller.kind !== 'page' || caller.pageId !== pageId) throw makeError();
  return caller;
}
