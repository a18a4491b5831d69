import { type AppMessage, CHANNEL, type HostEvent, type InitMessage, type Surface } from '../protocol.ts';

/**
 * widget.js, the one script a partner includes: `SocialWidget.mount(element, options)` puts our
 * app in an iframe and relays its events. Kept tiny (budget: 5 KB gzip); the app does the work.
 */
export interface MountOptions {
  token: string;
  surface: Surface;
  theme?: 'light' | 'dark';
  locale?: string;
  /**
   * The size of the parts a video is uploaded in, in bytes (default 4 MiB, at least 16 KiB): each
   * part is one request, and one that breaks is sent again from where it stopped. Smaller parts
   * suit proxies that cap request bodies or slow connections.
   */
  uploadChunkBytes?: number;
}

type Listener = (data: unknown) => void;

/** The service's base URL is where this script came from: `{base_url}/embed/widget.js`. */
const scriptSrc = (document.currentScript as HTMLScriptElement | null)?.src ?? location.href;
const BASE = new URL('../', scriptSrc);
const ORIGIN = BASE.origin;

const TITLES: Record<Surface, string> = {
  connect: 'Connected social accounts',
  inbox: 'Social inbox',
  publish: 'Publish a post',
};

function mount(element: HTMLElement, options: MountOptions) {
  const listeners = new Map<string, Set<Listener>>();
  const emit = (event: HostEvent, data: unknown) => {
    for (const fn of listeners.get(event) ?? []) fn(data);
  };
  const iframe = document.createElement('iframe');
  iframe.title = TITLES[options.surface] ?? 'Social widget';
  iframe.style.cssText = 'display:block;width:100%;min-width:0;border:0;height:120px';
  let destroyed = false;

  const onMessage = (event: MessageEvent) => {
    // Only our app, in this very iframe, speaks to us.
    if (event.origin !== ORIGIN || event.source !== iframe.contentWindow) return;
    const message = event.data as AppMessage;
    if (message?.channel !== CHANNEL) return;
    if (message.type === 'hello') {
      const init: InitMessage = { channel: CHANNEL, type: 'init', ...options };
      iframe.contentWindow?.postMessage(init, ORIGIN);
      return;
    }
    if (message.event === 'resize') iframe.style.height = `${(message.data as { height: number }).height}px`;
    emit(message.event, message.data);
  };
  addEventListener('message', onMessage);

  openFrame(element, iframe, options.token, () => destroyed).catch((error: Error) => {
    if (destroyed) return;
    const ended = error.message === '401';
    showNote(element, ended);
    if (ended) emit('session.expired', {});
  });

  return {
    on(event: HostEvent, fn: Listener) {
      const set = listeners.get(event) ?? new Set<Listener>();
      set.add(fn);
      listeners.set(event, set);
      return this;
    },
    destroy() {
      destroyed = true;
      removeEventListener('message', onMessage);
      iframe.remove();
      listeners.clear();
    },
  };
}

/**
 * The iframe's address names the session (never the token), so our server can answer that
 * session's frame-ancestors; the id comes from the API with the token in a header.
 */
async function openFrame(
  element: HTMLElement,
  iframe: HTMLIFrameElement,
  token: string,
  destroyed: () => boolean,
) {
  const response = await fetch(new URL('v1/embed/session', BASE), {
    headers: { authorization: `Bearer ${token}` },
  });
  if (destroyed()) return;
  if (!response.ok) throw new Error(String(response.status));
  const session = (await response.json()) as { id: string };
  iframe.src = new URL(`embed/app?session=${encodeURIComponent(session.id)}`, BASE).href;
  element.appendChild(iframe);
}

function showNote(element: HTMLElement, ended: boolean): void {
  const note = document.createElement('p');
  note.setAttribute('role', 'alert');
  note.textContent = ended
    ? 'This session has ended. Reload the page to start a new one.'
    : 'The widget could not load. Check the connection and reload the page.';
  element.appendChild(note);
}

(globalThis as unknown as { SocialWidget: { mount: typeof mount } }).SocialWidget = { mount };
