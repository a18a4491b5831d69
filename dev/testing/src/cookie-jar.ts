/**
 * The cookies of one scripted browser: what responses set (Set-Cookie, with its Path and Max-Age)
 * goes back on later requests to the same origin and path, as a browser would send it. Enough for
 * the hosted connect flow, whose callback must come back with the cookie /start set; no domains,
 * expiry clocks or Secure handling (the test stack is plain http on one host).
 */
interface Cookie {
  origin: string;
  path: string;
  name: string;
  value: string;
}

export class CookieJar {
  readonly #cookies = new Map<string, Cookie>();

  /** fetch() with this browser's cookies, keeping the ones the response sets; never follows redirects. */
  async fetch(url: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    const cookie = this.header(url);
    if (cookie && !headers.has('cookie')) headers.set('cookie', cookie);
    const response = await fetch(url, { redirect: 'manual', ...init, headers });
    this.keep(url, response);
    return response;
  }

  /** The Cookie header this browser sends to `url` (empty when none matches). */
  header(url: string): string {
    const { origin, pathname } = new URL(url);
    return [...this.#cookies.values()]
      .filter((c) => c.origin === origin && pathMatches(pathname, c.path))
      .map((c) => `${c.name}=${c.value}`)
      .join('; ');
  }

  keep(url: string, response: Response): void {
    const { origin } = new URL(url);
    for (const line of response.headers.getSetCookie()) {
      const [pair = '', ...attributes] = line.split(';').map((part) => part.trim());
      const at = pair.indexOf('=');
      const name = pair.slice(0, at);
      const value = pair.slice(at + 1);
      const path = attribute(attributes, 'path') ?? '/';
      const key = `${origin} ${path} ${name}`;
      if (!value || attribute(attributes, 'max-age') === '0') this.#cookies.delete(key);
      else this.#cookies.set(key, { origin, path, name, value });
    }
  }
}

function attribute(attributes: string[], name: string): string | undefined {
  const found = attributes.find((a) => a.toLowerCase().startsWith(`${name}=`));
  return found?.slice(name.length + 1);
}

/** RFC 6265 path-match: the same path, or below it. */
function pathMatches(requestPath: string, cookiePath: string): boolean {
  if (requestPath === cookiePath) return true;
  const prefix = cookiePath.endsWith('/') ? cookiePath : `${cookiePath}/`;
  return requestPath.startsWith(prefix);
}
