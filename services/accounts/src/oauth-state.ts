import { createHmac } from 'node:crypto';
import { hashToken, randomBase62, safeEqual } from '@svc/crypto';
import type { AccountsConfig } from './config.ts';
import type { ConnectStore } from './connect-store.ts';

/**
 * The OAuth `state`: `<id>.<signature>`. The signature (HMAC with a server secret) refuses a
 * forged state before any lookup; the row makes it single-use and expiring, and binds it to the
 * connect link and network the user started from, and to the browser that started it.
 *
 * The browser binding: start hands the browser a random nonce (in a cookie) and keeps only its
 * hash here; the callback must bring the nonce back. Without it, a consent URL made for one connect
 * link could be sent to someone else, whose Pages would then land in the sender's workspace.
 */
export type StateProblem = 'missing' | 'forged' | 'reused' | 'expired' | 'other_browser';

export class StateError extends Error {
  constructor(readonly problem: StateProblem) {
    super(`OAuth state ${problem}`);
  }
}

interface IssuedState {
  state: string;
  /** For the starting browser's cookie only: the row keeps its hash. */
  browserNonce: string;
  ttlSeconds: number;
}

export class OAuthStates {
  constructor(
    private readonly store: ConnectStore,
    private readonly config: Pick<AccountsConfig, 'OAUTH_STATE_SECRET' | 'OAUTH_STATE_TTL_SECONDS'>,
    private readonly now: () => Date,
  ) {}

  async issue(linkId: string, network: string): Promise<IssuedState> {
    const id = randomBase62(24);
    const browserNonce = randomBase62(32);
    const ttlSeconds = this.config.OAUTH_STATE_TTL_SECONDS;
    await this.store.createState({
      id,
      linkId,
      network,
      browserHash: hashToken(browserNonce),
      expiresAt: new Date(this.now().getTime() + ttlSeconds * 1000),
    });
    return { state: `${id}.${this.sign(id)}`, browserNonce, ttlSeconds };
  }

  /**
   * Marks the state used, then checks it came back to the browser that started it. A state
   * presented by another browser is spent too: the code in that callback URL can then never be
   * replayed from the starting browser.
   */
  async consume(input: {
    state: string;
    browserNonce: string;
  }): Promise<{ linkId: string; network: string }> {
    const now = this.now();
    if (!input.state) throw new StateError('missing');
    const [id, signature] = input.state.split('.');
    if (!id || !signature || !safeEqual(signature, this.sign(id))) throw new StateError('forged');
    const { claimed, state } = await this.store.claimState(id, now);
    if (!state) throw new StateError('forged');
    if (!claimed) throw new StateError('reused');
    if (!sameBrowser(state.browserHash, input.browserNonce)) throw new StateError('other_browser');
    if (state.expiresAt <= now) throw new StateError('expired');
    return { linkId: state.linkId, network: state.network };
  }

  private sign(id: string): string {
    return createHmac('sha256', this.config.OAUTH_STATE_SECRET).update(id).digest('base64url');
  }
}

/** A state issued before browsers were bound (no hash) is refused like a foreign one. */
function sameBrowser(storedHash: string | null, nonce: string): boolean {
  if (!storedHash || !nonce) return false;
  return safeEqual(storedHash, hashToken(nonce));
}
