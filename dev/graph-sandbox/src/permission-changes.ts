import { unixSeconds } from './clock.ts';
import type { SentDelivery } from './webhooks.ts';
import type { World } from './world.ts';

/**
 * A user takes back one permission of the app's grant (Settings → Business integrations), or
 * gives it back. Every token of the user (page tokens included) loses or regains it at once, and
 * Meta tells the app with a `permissions` webhook (`entry.id` = the user, `changes[].field` = the
 * permission, `value.verb` = revoked | granted), unless `notify` is false: a change the app
 * never heard of, which it only finds out when a call is refused (#10 / #200).
 */
export async function changePermission(
  world: World,
  userId: string,
  permission: string,
  verb: 'revoked' | 'granted',
  notify: boolean,
): Promise<SentDelivery | null> {
  const grant = world.store.grants.get(userId);
  if (grant) grant.scopes = withScope(grant.scopes, permission, verb);
  for (const token of world.store.tokens.values())
    if (token.userId === userId) token.scopes = withScope(token.scopes, permission, verb);
  if (!notify) return null;
  const time = unixSeconds(world.clock.now());
  return world.webhooks.sendEvent({
    object: 'permissions',
    entry: [{ id: userId, time, changes: [{ field: permission, value: { verb } }] }],
  });
}

function withScope(scopes: string[], permission: string, verb: 'revoked' | 'granted'): string[] {
  const others = scopes.filter((s) => s !== permission);
  return verb === 'granted' ? [...others, permission] : others;
}
