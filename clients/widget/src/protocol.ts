import type { EmbedSurface } from '@svc/contracts/public';

/**
 * The messages between the loader (in the partner's page) and the app (in our iframe). Both ends
 * check the sender's exact origin and window; the `channel` tag only sets our traffic apart from
 * other postMessage users on the same page.
 */
export const CHANNEL = 'social-widget';

/** What the widget may show: the surfaces of an embed session. */
export type Surface = EmbedSurface;

/** What the host page can listen to with `on(event, fn)`. */
export type HostEvent =
  | 'ready'
  | 'account.connected'
  | 'account.disconnected'
  | 'message.sent'
  | 'post.created'
  | 'session.expired'
  | 'resize';

/** App → loader: the app is listening (asks for the token), or an event for the host. */
export type AppMessage =
  | { channel: typeof CHANNEL; type: 'hello' }
  | { channel: typeof CHANNEL; type: 'event'; event: HostEvent; data: unknown };

/** Loader → app: the one message that carries the token (never in a URL). */
export interface InitMessage {
  channel: typeof CHANNEL;
  type: 'init';
  token: string;
  surface: Surface;
  theme?: 'light' | 'dark' | undefined;
  locale?: string | undefined;
  uploadChunkBytes?: number | undefined;
}
