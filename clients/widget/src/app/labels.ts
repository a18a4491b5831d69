import type { ConversationView } from '@svc/contracts/public';

/** Words and formats the screens share: network names, account states, dates in the host's locale. */
export const NETWORKS = [
  { id: 'page_network', name: 'Facebook Page', action: 'Connect a Facebook Page' },
  { id: 'photo_network', name: 'Instagram', action: 'Connect an Instagram professional account' },
] as const;

export const networkName = (id: string) => NETWORKS.find((n) => n.id === id)?.name ?? id;

/** Server messages name networks by their API value; people read the network's name. */
export const humanize = (text: string) =>
  text.replace(/photo_network/g, 'Instagram').replace(/page_network/g, 'Facebook');

export const STATUS_TEXT: Record<string, string> = {
  active: 'Connected',
  expired: 'Expired: connect again',
  revoked: 'Access removed: connect again',
  error: 'Needs attention',
};

export function accountName(account: { network: string; username: string; display_name: string }) {
  return account.network === 'photo_network' ? `@${account.username}` : account.display_name;
}

let locale: string | undefined;
export const setLocale = (value: string | undefined) => {
  locale = value;
};

export function formatTime(iso: string | null | undefined): string {
  if (!iso) return '';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  try {
    return new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeStyle: 'short' }).format(date);
  } catch {
    return date.toISOString();
  }
}

export function conversationTitle(c: ConversationView): string {
  if (c.kind === 'dm') return c.contact?.name ?? (c.contact?.handle ? `@${c.contact.handle}` : 'Someone');
  const caption = c.object?.caption?.trim();
  return caption ? `Comments on “${caption.slice(0, 60)}”` : 'Comments on a post';
}
