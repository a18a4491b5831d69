import { type DebugToken, debugTokenResponse, parse, type TokenResponse, tokenResponse } from './shapes.ts';
import type { GraphTransport } from './transport.ts';

/** Facebook Login (facts §1): dialog URL, code exchange, long-lived exchange, debug_token. */
export class OAuthApi {
  constructor(private readonly t: GraphTransport) {}

  dialogUrl(input: {
    redirectUri: string;
    state: string;
    scopes: string[];
    authType?: 'rerequest' | 'reauthenticate';
  }): string {
    const { dialogBaseUrl, apiVersion, appId } = this.t.config;
    const url = new URL(`${dialogBaseUrl}/${apiVersion}/dialog/oauth`);
    url.searchParams.set('client_id', appId);
    url.searchParams.set('redirect_uri', input.redirectUri);
    url.searchParams.set('state', input.state);
    url.searchParams.set('scope', input.scopes.join(','));
    url.searchParams.set('response_type', 'code');
    if (input.authType) url.searchParams.set('auth_type', input.authType);
    return url.toString();
  }

  /** The secret travels in a POST body, never in a URL that could be logged. A code is single-use: no blind resend. */
  async exchangeCode(input: { code: string; redirectUri: string }): Promise<TokenResponse> {
    const body = await this.t.call({
      method: 'POST',
      path: '/oauth/access_token',
      form: { ...this.app(), redirect_uri: input.redirectUri, code: input.code.replace(/#_=_$/, '') },
      idempotent: false,
    });
    return parse(tokenResponse, body, 'code exchange');
  }

  async exchangeForLongLived(shortLivedToken: string): Promise<TokenResponse> {
    const body = await this.t.call({
      method: 'POST',
      path: '/oauth/access_token',
      form: { grant_type: 'fb_exchange_token', ...this.app(), fb_exchange_token: shortLivedToken },
    });
    return parse(tokenResponse, body, 'long-lived token exchange');
  }

  appToken(): string {
    return `${this.t.config.appId}|${this.t.config.appSecret}`;
  }

  /** Answers for dead tokens too (`is_valid: false` and `error`), so it never throws for those. */
  async debugToken(inputToken: string): Promise<DebugToken> {
    const body = await this.t.call({
      method: 'GET',
      path: '/debug_token',
      query: { input_token: inputToken },
      token: this.appToken(),
    });
    return parse(debugTokenResponse, body, 'debug_token').data;
  }

  private app() {
    return { client_id: this.t.config.appId, client_secret: this.t.config.appSecret };
  }
}
