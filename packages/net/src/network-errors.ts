import { BlockedAddressError } from './lookup.ts';

// What partners read in an attempt's error or a network_error's reason: plain words rather than
// undici's and Node's codes, which say little to someone outside the stack.
const KNOWN: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'DNS lookup failed',
  ETIMEDOUT: 'connect timed out',
  UND_ERR_CONNECT_TIMEOUT: 'connect timed out',
  UND_ERR_HEADERS_TIMEOUT: 'timed out waiting for the response',
  UND_ERR_BODY_TIMEOUT: 'timed out reading the response',
  CERT_HAS_EXPIRED: 'TLS certificate expired',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'self-signed TLS certificate',
  SELF_SIGNED_CERT_IN_CHAIN: 'self-signed TLS certificate',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'TLS certificate not trusted',
  ERR_TLS_CERT_ALTNAME_INVALID: 'TLS certificate does not match the host',
};

/**
 * Why an outbound request failed, in words. `peer` names the other side for a socket it closed
 * ("the server" for media, "the receiver" for webhook deliveries). An unknown code keeps the code
 * and undici's message; an error without a code says what caused it, if anything did.
 */
export function describeNetworkError(error: unknown, peer = 'server'): string {
  if (error instanceof BlockedAddressError) return error.message;
  if (!(error instanceof Error)) return error === undefined ? 'unknown error' : String(error);
  const code = (error as { code?: unknown }).code;
  if (code === 'UND_ERR_SOCKET') return `connection closed by the ${peer}`;
  if (typeof code === 'string') return KNOWN[code] ?? `${code}: ${error.message}`.trim();
  if (error.cause instanceof Error) return `${error.message}: ${describeNetworkError(error.cause, peer)}`;
  return error.message || 'unknown error';
}
