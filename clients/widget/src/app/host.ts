import { type AppMessage, CHANNEL, type HostEvent, type InitMessage } from '../protocol.ts';

/**
 * The app's side of the conversation with the partner's page. The page's origin must be one of
 * the session's allowed origins (the server already refuses other framers with frame-ancestors);
 * the app greets each plausible one (a message to a wrong origin is dropped by the browser), takes
 * the token only from the parent window at an allowed origin, and from then on posts to that exact
 * origin alone.
 */
export interface Host {
  init: InitMessage;
  emit(event: HostEvent, data?: unknown): void;
}

export function connectHost(allowedOrigins: string[]): Promise<Host> {
  return new Promise((resolve) => {
    const onMessage = (event: MessageEvent) => {
      const message = event.data as InitMessage;
      if (event.source !== parent || !allowedOrigins.includes(event.origin)) return;
      if (message?.channel !== CHANNEL || message.type !== 'init' || typeof message.token !== 'string')
        return;
      removeEventListener('message', onMessage);
      const origin = event.origin;
      resolve({
        init: message,
        emit(type, data = {}) {
          const out: AppMessage = { channel: CHANNEL, type: 'event', event: type, data };
          parent.postMessage(out, origin);
        },
      });
    };
    addEventListener('message', onMessage);
    const hello: AppMessage = { channel: CHANNEL, type: 'hello' };
    for (const origin of candidateOrigins(allowedOrigins)) parent.postMessage(hello, origin);
  });
}

/** The framing page's origin as the browser reports it, when allowed; else every allowed origin. */
function candidateOrigins(allowed: string[]): string[] {
  const reported = [location.ancestorOrigins?.[0], originOf(document.referrer)];
  const known = reported.filter((o): o is string => !!o && allowed.includes(o));
  return known.length > 0 ? [known[0] as string] : allowed;
}

function originOf(url: string): string | undefined {
  try {
    return url ? new URL(url).origin : undefined;
  } catch {
    return undefined;
  }
}
