import { LocalCache } from '@svc/cache';
import type { AccountsDirectory, KnownAccount } from '@svc/directory';
import type { GraphClient } from '@svc/graph-client';
import type { Logger } from '@svc/logging';
import type { ConversationRow } from './inbox-rows.ts';

type Contact = NonNullable<ConversationRow['contact']>;
type ObjectInfo = NonNullable<ConversationRow['object']>;

/** Names and captions change rarely; an hour keeps lookups off every message of a busy thread. */
const MAX_AGE_MS = 3_600_000;
/**
 * A lookup that failed (no consent yet, a rate limit) is not asked again for this long: under a
 * rate limit, asking on every message would only keep the limit on.
 */
const MISS_AGE_MS = 300_000;

/**
 * What webhooks leave out and the network can tell: a DM contact's name, handle and picture, and
 * a commented object's permalink and caption. Looked up once per contact or object and kept; a
 * failed lookup (Instagram answers profiles only after the person wrote to the account; a rate
 * limit) gives what the webhook had, and is asked again only after a few minutes.
 */
export class NetworkLookups {
  private readonly contacts = new LocalCache<Contact>({ maxAgeMs: MAX_AGE_MS, maxEntries: 50_000 });
  private readonly objects = new LocalCache<ObjectInfo>({ maxAgeMs: MAX_AGE_MS, maxEntries: 10_000 });
  private readonly misses = new LocalCache<true>({ maxAgeMs: MISS_AGE_MS, maxEntries: 50_000 });

  constructor(
    private readonly graph: GraphClient,
    private readonly accounts: AccountsDirectory,
    private readonly logger: Logger,
  ) {}

  async contact(account: KnownAccount, contactId: string): Promise<Contact> {
    const fallback = { id: contactId, name: null, handle: null, avatar_url: null };
    return this.remembered(this.contacts, `${account.id}:${contactId}`, fallback, () =>
      this.lookUpContact(account, contactId),
    );
  }

  async object(account: KnownAccount, objectId: string, permalink: string | null): Promise<ObjectInfo> {
    const fallback = { id: objectId, permalink, caption: null };
    // Per account, as contacts are: what one tenant's token read is never shown to another.
    const key = `${account.id}:object:${objectId}`;
    return this.remembered(this.objects, key, fallback, () => this.lookUpObject(account, objectId));
  }

  close(): void {
    this.contacts.close();
    this.objects.close();
    this.misses.close();
  }

  /** The kept answer, else a lookup kept on success; a failure answers the fallback for a while. */
  private async remembered<V>(cache: LocalCache<V>, key: string, fallback: V, lookUp: () => Promise<V>) {
    const kept = cache.peek(key);
    if (kept !== undefined) return kept;
    if (this.misses.peek(key)) return fallback;
    try {
      const value = await lookUp();
      cache.set(key, value);
      return value;
    } catch (err) {
      this.misses.set(key, true);
      this.logger.debug({ err }, 'network lookup failed; recorded with what the webhook had');
      return fallback;
    }
  }

  private async lookUpContact(account: KnownAccount, contactId: string): Promise<Contact> {
    const { token } = await this.accounts.token(account.id);
    const platform = account.network === 'photo_network' ? 'instagram' : 'messenger';
    const p = await this.graph.inbox.profile(token, contactId, platform);
    const fullName = [p.first_name, p.last_name].filter(Boolean).join(' ');
    return {
      id: contactId,
      name: p.name ?? (fullName || p.username) ?? null,
      handle: p.username ?? null,
      avatar_url: p.profile_pic ?? null,
    };
  }

  private async lookUpObject(account: KnownAccount, objectId: string): Promise<ObjectInfo> {
    const { token } = await this.accounts.token(account.id);
    if (account.network === 'photo_network') {
      const media = await this.graph.instagram.media(token, objectId);
      return { id: objectId, permalink: media.permalink ?? null, caption: media.caption ?? null };
    }
    const post = await this.graph.pages.post(token, objectId);
    return { id: objectId, permalink: post.permalink_url ?? null, caption: post.message ?? null };
  }
}
