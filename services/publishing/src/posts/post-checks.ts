// What a post must pass before anything is written or sent: its targets (found, in the workspace,
// connected) and its media, against spec 3 and each network's rules.
import type { Account } from '@svc/contracts';
import type { Network, PostMediaView } from '@svc/contracts/public';
import { type Caller, inScope } from '@svc/db';
import type { AccountsDirectory } from '@svc/directory';
import { errors, ServiceError } from '@svc/errors';
import type { KnownMedia } from '../media/known-media.ts';
import type { MediaLibrary } from '../media/media-library.ts';
import type { PostInput } from './post-input.ts';
import { checkForNetwork } from './rules.ts';

type CheckedInput = Pick<PostInput, 'workspaceId' | 'caption' | 'mediaIds' | 'accountIds'>;

export class PostChecks {
  constructor(
    private readonly accounts: AccountsDirectory,
    private readonly media: MediaLibrary,
  ) {}

  /**
   * The checks of spec 3 and the networks' rules: targets and media of this workspace, active
   * accounts (else 409 account_disconnected), captions and media each network accepts.
   */
  async check(caller: Caller, input: CheckedInput): Promise<{ accounts: Account[]; media: PostMediaView[] }> {
    if (new Set(input.accountIds).size !== input.accountIds.length)
      throw errors.validation('targets', 'each account may be targeted once');
    // The targets and the media read together; the checks then run in order.
    const [found, known] = await Promise.all([
      this.accounts.visible(caller, input.accountIds),
      input.mediaIds.length > 0 ? this.media.knownMedia(input.mediaIds) : new Map<string, KnownMedia>(),
    ]);
    const accounts = input.accountIds.map((accountId, index) => {
      const account = found[index];
      if (!account) throw errors.validation(`targets.${index}`, `account ${accountId} not found`);
      if (account.workspaceId !== input.workspaceId)
        throw errors.validation(
          `targets.${index}`,
          `account ${accountId} is not in workspace ${input.workspaceId}`,
        );
      assertActive(account);
      return account;
    });
    const media = mediaSummaries(known, caller, input.workspaceId, input.mediaIds);
    for (const account of accounts) checkForNetwork(account.network as Network, input.caption, media);
    return { accounts, media };
  }

  /** Accounts to publish to again must still be connected (those out of scope were checked on creation). */
  async assertStillActive(caller: Caller, accountIds: string[]): Promise<void> {
    for (const account of await this.accounts.visible(caller, accountIds)) if (account) assertActive(account);
  }
}

function assertActive(account: Account): void {
  if (account.status !== 'active')
    throw new ServiceError(
      'account_disconnected',
      `account ${account.id} (@${account.username}) is ${account.status}${account.lastError ? `: ${account.lastError}` : ''}; reconnect it through a connect link`,
    );
}

/** The post's media in its order, each found in the caller's scope and of the post's workspace. */
function mediaSummaries(
  known: Map<string, KnownMedia>,
  caller: Caller,
  workspaceId: string,
  mediaIds: string[],
): PostMediaView[] {
  return mediaIds.map((id, index) => {
    const media = known.get(id);
    if (!media || !inScope(caller, media)) throw errors.validation(`media.${index}`, `media ${id} not found`);
    if (media.workspaceId !== workspaceId)
      throw errors.validation(`media.${index}`, `media ${id} is not in workspace ${workspaceId}`);
    return { id: media.id, kind: media.kind, mime: media.mime, width: media.width, height: media.height };
  });
}
