/**
 * The live updates of `GET /v1/embed/stream`: Server-Sent Events read with fetch(), so the token
 * travels in the Authorization header (EventSource would need it in the URL). Reconnects after a
 * drop, with a growing pause; a 401 or a `session.expired` event ends it for good.
 */
/** Not from the server: the stream is back after a drop, and what it missed is unknown. */
export const RECONNECTED = 'stream.reconnected';

export interface StreamEvent {
  type: string;
  data: unknown;
}

export function openStream(
  authorization: string,
  onEvent: (event: StreamEvent) => void,
  onExpired: () => void,
): () => void {
  const controller = new AbortController();
  let pause = 500;
  let opened = false;
  const run = async () => {
    while (!controller.signal.aborted) {
      try {
        const response = await fetch('/v1/embed/stream', {
          headers: { authorization, accept: 'text/event-stream' },
          signal: controller.signal,
          cache: 'no-store',
        });
        if (response.status === 401) return onExpired();
        if (response.ok && response.body) {
          pause = 500;
          // Events are not replayed: after a drop the screens read their lists again.
          if (opened) onEvent({ type: RECONNECTED, data: null });
          opened = true;
          await readEvents(response.body, (event) => {
            if (event.type === 'session.expired') {
              controller.abort();
              onExpired();
            } else onEvent(event);
          });
        }
      } catch {
        // Dropped or aborted: retried below unless we were closed.
      }
      if (controller.signal.aborted) return;
      await new Promise((resolve) => setTimeout(resolve, pause));
      pause = Math.min(pause * 2, 15_000);
    }
  };
  void run();
  return () => controller.abort();
}

/** Splits the byte stream into events (blank-line separated `event:` and `data:` lines). */
async function readEvents(body: ReadableStream<Uint8Array>, onEvent: (event: StreamEvent) => void) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    let end = buffer.indexOf('\n\n');
    while (end >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const event = parseBlock(block);
      if (event) onEvent(event);
      end = buffer.indexOf('\n\n');
    }
  }
}

function parseBlock(block: string): StreamEvent | undefined {
  let type = 'message';
  const data: string[] = [];
  for (const line of block.replace(/\r/g, '').split('\n')) {
    if (line.startsWith('event:')) type = line.slice(6).trim();
    else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
  }
  if (data.length === 0) return undefined;
  try {
    return { type, data: JSON.parse(data.join('\n')) };
  } catch {
    return undefined;
  }
}
