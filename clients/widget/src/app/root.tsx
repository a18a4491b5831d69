import { useEffect, useMemo, useState } from 'preact/hooks';
import type { Surface } from '../protocol.ts';
import { Accounts } from './accounts.tsx';
import { createApi, failureText } from './api.ts';
import { Composer } from './composer.tsx';
import { type Ctx, eventData, type Session } from './context.ts';
import type { Host } from './host.ts';
import { Inbox } from './inbox.tsx';
import { openStream, type StreamEvent } from './stream.ts';
import { DEFAULT_CHUNK_BYTES } from './tus-upload.ts';

const SCREENS: Record<Surface, (props: { ctx: Ctx }) => preact.JSX.Element> = {
  connect: Accounts,
  inbox: Inbox,
  publish: Composer,
};

/**
 * The app once the host handed over the token: reads the session, opens the stream, and shows
 * the surface the host asked for, or why it cannot (session ended, surface not granted).
 */
export function Root({ host }: { host: Host }) {
  const { token, surface } = host.init;
  const [expired, setExpired] = useState(false);
  const [session, setSession] = useState<Session | null>(null);
  const [failure, setFailure] = useState('');
  const listeners = useMemo(() => new Set<(event: StreamEvent) => void>(), []);
  const api = useMemo(() => createApi(token, () => setExpired(true)), [token]);

  useEffect(() => {
    api.get<Session>('/session').then(setSession, (error) => setFailure(failureText(error)));
    return openStream(
      api.authorization,
      (event) => {
        // Account changes reach the host whichever surface is shown.
        if (event.type === 'account.connected' || event.type === 'account.disconnected')
          host.emit(event.type, { account: eventData(event).account });
        for (const fn of listeners) fn(event);
      },
      () => setExpired(true),
    );
  }, []);

  useEffect(() => {
    if (expired) host.emit('session.expired');
  }, [expired]);
  useEffect(() => {
    if (!session) return;
    // The first render with data, measurable from the frame (performance marks are per document).
    performance.mark('widget-ready');
    host.emit('ready', { surface });
  }, [session]);

  const ctx = useMemo<Ctx | null>(
    () =>
      session && {
        api,
        session,
        emit: host.emit,
        uploadChunkBytes: chunkBytesOf(host.init.uploadChunkBytes),
        subscribe(fn) {
          listeners.add(fn);
          return () => listeners.delete(fn);
        },
      },
    [session],
  );

  if (expired)
    return (
      <div class="notice problem" role="alert">
        <h1>This session has ended</h1>
        <p>For your security the connection to your accounts was closed. Reload the page to continue.</p>
      </div>
    );
  if (failure)
    return (
      <p class="notice problem" role="alert">
        {failure}
      </p>
    );
  if (!ctx)
    return (
      <p class="muted" role="status">
        Loading…
      </p>
    );
  const Screen = SCREENS[surface];
  if (!Screen || !ctx.session.surfaces.includes(surface))
    return (
      <p class="notice problem" role="alert">
        This page cannot show “{surface}”: the session does not include it.
      </p>
    );
  return <Screen ctx={ctx} />;
}

/** The host's part size when it is a sensible number of bytes; the default otherwise. */
function chunkBytesOf(value: unknown): number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0 ? value : DEFAULT_CHUNK_BYTES;
}
