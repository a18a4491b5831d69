import { isIP } from 'node:net';
import { errors } from '@svc/errors';
import { assertPublic, BlockedAddressError, blockedReason, type Resolver } from '@svc/net';

const MAX_URL_LENGTH = 2048;

/** The URL's host without IPv6 brackets. */
export function hostOf(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '');
}

function isLoopbackHost(host: string): boolean {
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  return isIP(host) !== 0 && blockedReason(host) === 'loopback';
}

/**
 * The rules a webhook URL must pass when it is saved (every refusal names the field `url`):
 * absolute, https (http only to loopback, and only with private networks allowed, i.e. in
 * development), no credentials in it, and outside development no literal private, loopback or
 * link-local address. Host names are checked again at every connect (see lookup.ts).
 */
export function parseWebhookUrl(text: string, allowPrivateNetworks: boolean): URL {
  if (text.length > MAX_URL_LENGTH) throw errors.validation('url', `url is longer than ${MAX_URL_LENGTH}`);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw errors.validation('url', 'url must be an absolute https:// URL');
  }
  const host = hostOf(url);
  if (url.protocol === 'http:') {
    if (!(allowPrivateNetworks && isLoopbackHost(host)))
      throw errors.validation(
        'url',
        allowPrivateNetworks
          ? 'url must use https (http is accepted only to loopback in development)'
          : 'url must use https',
      );
  } else if (url.protocol !== 'https:') {
    throw errors.validation('url', 'url must use https');
  }
  if (url.username || url.password) throw errors.validation('url', 'url must not contain credentials');
  if (!host) throw errors.validation('url', 'url has no host');
  if (!allowPrivateNetworks) {
    if (host === 'localhost' || host.endsWith('.localhost'))
      throw errors.validation('url', 'url must not point to a loopback address');
    const reason = isIP(host) ? blockedReason(host) : null;
    if (reason) throw errors.validation('url', `url must not point to a ${reason} address`);
  }
  url.hash = '';
  return url;
}

/**
 * Resolves the host once when the webhook is saved, so a URL whose name points into a private
 * network is refused at once rather than failing every delivery. A name that does not resolve
 * (yet) is accepted: deliveries check again at connect time and retry.
 */
export async function assertResolvesPublic(url: URL, resolve: Resolver): Promise<void> {
  const host = hostOf(url);
  if (isIP(host)) return;
  let addresses: string[];
  try {
    addresses = (await resolve(host)).map((a) => a.address);
  } catch {
    return;
  }
  try {
    assertPublic(host, addresses);
  } catch (error) {
    if (!(error instanceof BlockedAddressError)) throw error;
    throw errors.validation('url', `url resolves to a ${error.reason} address (${error.address})`);
  }
}
