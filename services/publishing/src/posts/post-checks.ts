// What a post must pass before anything is written or sent: its targets (found, in the workspace,
// connected) and its media, against spec 3 and each network's rules.
import type { Account } from '@svc/contracts';
import type { Network, PostMediaView, ReelView } from '@svc/contracts/public';
import { type Caller, inScope } from '@svc/db';
import type { AccountsDirectory } from '@svc/directory';
import { errors, ServiceError } from '@svc/errors';
import type { KnownMedia } from '../media/known-media.ts';
import type { MediaLibrary } from '../media/media-library.ts';
import type { MediaFacts } from './format-rules.ts';
import type { PostInput } from './post-input.ts';
import { checkForNetwork } from './rules.ts';

type CheckedInput = Pick<
  PostInput,
  'workspaceId' | 'caption' | 'mediaIds' | 'accountIds' | 'formats' | 'reel'
>;

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
    const cover = input.reel?.cover && 'media' in input.reel.cover ? [input.reel.cover.media] : [];
    const mediaIds = [...input.mediaIds, ...cover];
    const [found, known] = await Promise.all([
      this.accounts.visible(caller, input.accountIds),
      mediaIds.length > 0 ? this.media.knownMedia(mediaIds) : new Map<string, KnownMedia>(),
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
    const media = mediaOfPost(known, caller, input.workspaceId, input.mediaIds);
    accounts.forEach((account, index) => {
      checkForNetwork(
        account.network as Network,
        input.formats[index] ?? 'feed',
        input.caption,
        media.map(factsOf),
      );
    });
    if (input.reel) checkReel(input.reel, known, caller, input.workspaceId, media);
    return { accounts, media: media.map(summaryOf) };
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
function mediaOfPost(
  known: Map<string, KnownMedia>,
  caller: Caller,
  workspaceId: string,
  mediaIds: string[],
): KnownMedia[] {
  return mediaIds.map((id, index) => mediaInWorkspace(known, caller, workspaceId, id, `media.${index}`));
}

function mediaInWorkspace(
  known: Map<string, KnownMedia>,
  caller: Caller,
  workspaceId: string,
  id: string,
  field: string,
): KnownMedia {
  const media = known.get(id);
  if (!media || !inScope(caller, media)) throw errors.validation(field, `media ${id} not found`);
  if (media.workspaceId !== workspaceId)
    throw errors.validation(field, `media ${id} is not in workspace ${workspaceId}`);
  return media;
}

/** A Reel's cover is an image of the workspace, or a frame within the video. */
function checkReel(
  reel: ReelView,
  known: Map<string, KnownMedia>,
  caller: Caller,
  workspaceId: string,
  media: KnownMedia[],
): void {
  const { cover } = reel;
  if (cover && 'media' in cover) {
    const image = mediaInWorkspace(known, caller, workspaceId, cover.media, 'reel.cover.media');
    if (image.kind !== 'image')
      throw errors.validation(
        'reel.cover.media',
        `a Reel's cover is an image; media ${image.id} is a ${image.kind}`,
      );
  }
  const durationMs = media.find((m) => m.video)?.video?.durationMs;
  if (cover && 'offset_ms' in cover && durationMs !== undefined && cover.offset_ms >= durationMs)
    throw errors.validation(
      'reel.cover.offset_ms',
      `the cover frame must be within the video (${durationMs} ms long); offset_ms is ${cover.offset_ms}`,
    );
}

function factsOf(media: KnownMedia): MediaFacts {
  return {
    id: media.id,
    kind: media.kind,
    width: media.width,
    height: media.height,
    size: media.size,
    video: media.video,
  };
}

/** What the post keeps of each media item, so it still describes them once the files are deleted. */
function summaryOf(media: KnownMedia): PostMediaView {
  const { id, kind, mime, width, height } = media;
  return { id, kind, mime, width, height, ...(media.video ? { duration_ms: media.video.durationMs } : {}) };
}
