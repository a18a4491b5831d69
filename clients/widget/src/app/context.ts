import type { AccountView, ConversationView, MessageView, PostView } from '@svc/contracts/public';
import type { HostEvent } from '../protocol.ts';
import type { Api } from './api.ts';
import type { StreamEvent } from './stream.ts';

/** What every screen receives: the API, the live events, the host's events and the session. */
export interface Session {
  id: string;
  workspace: { id: string; name: string };
  surfaces: string[];
  expires_at: string;
}

export interface Ctx {
  api: Api;
  session: Session;
  emit(event: HostEvent, data?: unknown): void;
  /** The size of each part a video is uploaded in (the host's `uploadChunkBytes`, or 4 MiB). */
  uploadChunkBytes: number;
  /** Subscribes to the stream; returns the unsubscribe function (a useEffect cleanup). */
  subscribe(fn: (event: StreamEvent) => void): () => void;
}

export type { AccountView, ConversationView, MessageView, PostView };

/** The record an event is about, whether the stream sends the event envelope or its data alone. */
export function eventData(event: StreamEvent): {
  account?: AccountView;
  conversation?: ConversationView;
  message?: MessageView;
  post?: PostView;
} {
  const body = event.data as { data?: object } | null;
  return (body && typeof body.data === 'object' ? body.data : (body ?? {})) as ReturnType<typeof eventData>;
}
