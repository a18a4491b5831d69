import { describe, expect, it } from 'vitest';
import { classify, GraphClient, graphClientConfigFromEnv, parseGraphClientEnv } from '../src/index.ts';

describe('graph client config', () => {
  // Guarantee: with nothing set, the client talks to Meta's production hosts at the facts page's version.
  it('defaults to Meta production', () => {
    const env = parseGraphClientEnv({});
    const config = graphClientConfigFromEnv(env, { appId: '1', appSecret: 's' });
    expect(config).toMatchObject({
      baseUrl: 'https://graph.facebook.com',
      apiVersion: 'v25.0',
      dialogBaseUrl: 'https://www.facebook.com',
    });
    const url = new GraphClient(config).oauth.dialogUrl({
      redirectUri: 'https://a/cb',
      state: 's',
      scopes: [],
    });
    expect(url.startsWith('https://www.facebook.com/v25.0/dialog/oauth?')).toBe(true);
  });

  // Guarantee: a malformed version is refused at start, not at the first call.
  it('rejects a malformed version', () => {
    expect(() => parseGraphClientEnv({ GRAPH_API_VERSION: '25' })).toThrow(/GRAPH_API_VERSION/);
  });

  // Guarantee: code 1/2 on a 4xx is not transient (e.g. "Error validating client secret" is code 1 / HTTP 400), and a
  // rate-limit code stays a rate limit even when Meta marks it is_transient.
  it('classifies by code, subcode and status', () => {
    expect(classify({ code: 1 }, 400)).toBe('invalid_request');
    expect(classify({ code: 1 }, 500)).toBe('transient');
    expect(classify({ code: 4, is_transient: true }, 400)).toBe('rate_limit');
    expect(classify({ code: 100, error_subcode: 2207028 }, 400)).toBe('media');
  });
});
