import type { SealedValues } from '@svc/crypto';
import type { Db } from './db.ts';
import type { ConnectLink, OAuthState, PageChoice, Prisma } from './generated/prisma/client.ts';

/** Single-use OAuth states and page choices are kept a day for support questions, then dropped. */
const SPENT_KEPT_MS = 86_400_000;

/**
 * Every read and write of what a connect goes through: connect links, the OAuth states issued for
 * them, and the page choices held while a user picks Pages.
 */
export class ConnectStore {
  constructor(private readonly db: Db) {}

  createLink(link: Omit<ConnectLink, 'createdAt'>): Promise<ConnectLink> {
    return this.db.connectLink.create({ data: link });
  }

  linkByTokenHash(tokenHash: string): Promise<ConnectLink | null> {
    return this.db.connectLink.findUnique({ where: { tokenHash } });
  }

  linkById(id: string): Promise<ConnectLink | null> {
    return this.db.connectLink.findUnique({ where: { id } });
  }

  async createState(state: Omit<OAuthState, 'usedAt' | 'createdAt'>): Promise<void> {
    await this.db.oAuthState.create({ data: state });
  }

  /**
   * Marks the state used (atomically, so two callbacks with one state cannot both pass) and reads
   * it: `claimed` is false when it was used before.
   */
  async claimState(id: string, now: Date): Promise<{ claimed: boolean; state: OAuthState | null }> {
    const claimed = await this.db.oAuthState.updateMany({
      where: { id, usedAt: null },
      data: { usedAt: now },
    });
    const state = await this.db.oAuthState.findUnique({ where: { id } });
    return { claimed: claimed.count === 1, state };
  }

  async createChoice(choice: Omit<PageChoice, 'usedAt' | 'createdAt'>): Promise<void> {
    await this.db.pageChoice.create({ data: choice });
  }

  choice(idHash: string): Promise<PageChoice | null> {
    return this.db.pageChoice.findUnique({ where: { idHash } });
  }

  /** Marks the choice made and drops its user token; false if it was made already. */
  async claimChoice(idHash: string, now: Date): Promise<boolean> {
    const claimed = await this.db.pageChoice.updateMany({
      where: { idHash, usedAt: null },
      data: { usedAt: now, userToken: null },
    });
    return claimed.count === 1;
  }

  /** The workspace's links, and the states and choices issued for them. */
  async purgeWorkspace(workspaceId: string): Promise<void> {
    const links = await this.db.connectLink.findMany({ where: { workspaceId }, select: { id: true } });
    const linkIds = links.map((l) => l.id);
    await this.db.$transaction([
      this.db.pageChoice.deleteMany({ where: { linkId: { in: linkIds } } }),
      this.db.oAuthState.deleteMany({ where: { linkId: { in: linkIds } } }),
      this.db.connectLink.deleteMany({ where: { workspaceId } }),
    ] satisfies Prisma.PrismaPromise<unknown>[]);
  }

  /** Drops the states and choices that expired more than a day before `now`. */
  async purgeSpent(now: Date): Promise<void> {
    const before = new Date(now.getTime() - SPENT_KEPT_MS);
    await this.db.oAuthState.deleteMany({ where: { expiresAt: { lt: before } } });
    await this.db.pageChoice.deleteMany({ where: { expiresAt: { lt: before } } });
  }

  /**
   * The user tokens held for a pending page choice (bound to the choice's id hash), as
   * `pnpm rotate-keys` re-seals them (see `reseal`): they live 15 minutes, but one may be open
   * while the keys rotate.
   */
  sealedPageChoices(): SealedValues {
    const { db } = this;
    return {
      what: 'page choice tokens',
      async page(after, take) {
        const rows = await db.pageChoice.findMany({
          where: { userToken: { not: null }, idHash: { gt: after } },
          orderBy: { idHash: 'asc' },
          take,
        });
        return rows.map((row) => ({ key: row.idHash, sealed: row.userToken as string, aad: row.idHash }));
      },
      async replace({ key, sealed }, userToken) {
        const { count } = await db.pageChoice.updateMany({
          where: { idHash: key, userToken: sealed },
          data: { userToken },
        });
        return count === 1;
      },
    };
  }
}
