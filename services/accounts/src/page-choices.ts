import { hashToken, randomBase62 } from '@svc/crypto';
import type { ConnectStore } from './connect-store.ts';
import type { PageChoice } from './generated/prisma/client.ts';
import type { TokenVault } from './token-vault.ts';

const CHOICE_TTL_MS = 15 * 60_000;

/** A choice of Pages that can still be made, with the user token it holds (sealed). */
type PendingChoice = PageChoice & { userToken: string };

/**
 * The page picker's state: when a user granted several Pages, the user token is held (sealed, bound
 * to the choice) until the user picks which to connect, for 15 minutes and once.
 */
export class PageChoices {
  constructor(
    private readonly store: ConnectStore,
    private readonly vault: TokenVault,
    private readonly now: () => Date,
  ) {}

  /** Holds the user token for a choice among the link's Pages; answers the choice's id. */
  async offer(linkId: string, network: string, userToken: string): Promise<string> {
    const choiceId = `pc_${randomBase62(32)}`;
    const idHash = hashToken(choiceId);
    await this.store.createChoice({
      idHash,
      linkId,
      network,
      userToken: this.vault.sealHeld(userToken, idHash),
      expiresAt: new Date(this.now().getTime() + CHOICE_TTL_MS),
    });
    return choiceId;
  }

  /** The choice, unless it was made already or expired. */
  async pending(choiceId: string): Promise<PendingChoice | null> {
    const choice = await this.store.choice(hashToken(choiceId));
    if (!choice?.userToken || choice.usedAt || choice.expiresAt <= this.now()) return null;
    return { ...choice, userToken: choice.userToken };
  }

  userToken(choice: PendingChoice): string {
    return this.vault.openHeld(choice.userToken, choice.idHash);
  }

  /** Marks the choice made and drops its token; false if another request made it first. */
  claim(choice: PendingChoice): Promise<boolean> {
    return this.store.claimChoice(choice.idHash, this.now());
  }
}
