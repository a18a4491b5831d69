import { errors } from '@svc/errors';
import { isLoopbackHost } from '@svc/net';

const MAX_ORIGINS = 20;
/** `https://` + a 253-character host + `:65535`. */
const MAX_ORIGIN_LENGTH = 8 + 253 + 6;
/** One DNS label, lowercase as the URL standard serializes it (CSP's host-char: ALPHA / DIGIT / "-"). */
const HOST_LABEL = /^[a-z0-9-]{1,63}$/;

/**
 * The origins allowed to frame the widget. They go verbatim into the widget page's
 * `Content-Security-Policy: frame-ancestors ...`, so each must be an origin exactly as the URL
 * standard serializes it (`new URL(o).origin === o`: lowercase scheme and host, no default port,
 * no trailing slash, no credentials, path, query or fragment) with a host made of DNS labels only:
 * the URL parser lets `;`, `,`, `"` and `*` into a host, and any of them would rewrite the policy.
 * The scheme is https, and http only to loopback in development (as webhook URLs). Nothing is
 * trimmed or rewritten: the partner sees what will be enforced. Each refusal names the item
 * (`allowed_origins.1`), as the gateway names array items.
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
  const url = text.length <= MAX_ORIGIN_LENGTH ? parsedUrl(text) : undefined;
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:'))
    throw refuse('is not an origin: write it as https://host[:port]');
  if (url.origin !== text)
    throw refuse(
      `is not an origin as browsers write it: write "${url.origin}" (lowercase, no default port, no path, query, fragment, credentials or trailing slash)`,
    );
  if (!url.hostname.split('.').every((label) => HOST_LABEL.test(label)))
    throw refuse('must name one host made of letters, digits, hyphens and dots (no wildcards)');
  if (url.protocol === 'http:' && !(allowLoopbackHttp && isLoopbackHost(url.hostname)))
    throw refuse(
      allowLoopbackHttp
        ? 'must use https (http is accepted only for loopback in development)'
        : 'must use https',
    );
  return text;
}

function parsedUrl(text: string): URL | undefined {
  try {
    return new URL(text);
  } catch {
    return undefined;
  }
}
