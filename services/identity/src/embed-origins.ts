import { errors } from '@svc/errors';
import { hostOf, isLoopbackHost } from '@svc/net';

const MAX_ORIGINS = 20;
const MAX_ORIGIN_LENGTH = 253 + 16;

/**
 * The origins allowed to frame the widget, as a browser writes them (`https://app.example`,
 * port included when not the default). The rules are those of webhook URLs: https, and http only
 * to loopback in development; no credentials. Anything beyond an origin (a path, a query, a
 * fragment, a wildcard) is refused rather than trimmed, so the partner sees what will be enforced.
 * Each refusal names the item (`allowed_origins.1`), as the gateway names array items.
 */
export function parseAllowedOrigins(values: string[], allowLoopbackHttp: boolean): string[] {
  if (values.length === 0)
    throw errors.validation('allowed_origins', 'allowed_origins needs at least one origin');
  if (values.length > MAX_ORIGINS)
    throw errors.validation('allowed_origins', `allowed_origins takes at most ${MAX_ORIGINS} origins`);
  const origins = values.map((value, index) =>
    parseOrigin(value, allowLoopbackHttp, `allowed_origins.${index}`),
  );
  return [...new Set(origins)];
}

function parseOrigin(text: string, allowLoopbackHttp: boolean, field: string): string {
  const refuse = (why: string) => errors.validation(field, `"${text.slice(0, 100)}" ${why}`);
  let url: URL;
  try {
    if (text.length > MAX_ORIGIN_LENGTH) throw new Error('too long');
    url = new URL(text);
  } catch {
    throw refuse('is not an origin: write it as https://host[:port]');
  }
  if (url.username || url.password) throw refuse('must not carry credentials');
  if (url.pathname !== '/' || url.search || url.hash || text.endsWith('/'))
    throw refuse('must be an origin only (https://host[:port]), without a path, query or fragment');
  if (url.protocol === 'http:') {
    if (!(allowLoopbackHttp && isLoopbackHost(hostOf(url))))
      throw refuse(
        allowLoopbackHttp
          ? 'must use https (http is accepted only for loopback in development)'
          : 'must use https',
      );
  } else if (url.protocol !== 'https:') {
    throw refuse('must use https');
  }
  if (hostOf(url).includes('*')) throw refuse('must name one host (no wildcards)');
  return url.origin;
}
