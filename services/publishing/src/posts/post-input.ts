import type { UpdatePostRequest } from '@svc/contracts';
import type { PostFormat, ReelView } from '@svc/contracts/public';
import { errors } from '@svc/errors';
import { reelOf, targetFormatsOf } from './post-formats.ts';

/** What a new post asks for, parsed from its request. */
export interface PostInput {
  workspaceId: string;
  caption: string;
  mediaIds: string[];
  accountIds: string[];
  /** Each target's format, beside accountIds. */
  formats: PostFormat[];
  reel: ReelView | null;
  title: string | null;
  scheduleAt: Date | null;
  externalRef: string | null;
  options: Record<string, unknown>;
  draft: boolean;
  createdBy: string;
}

/** What a change of a post asks for: undefined leaves a field as it is. */
export interface PostPatch {
  caption?: string | undefined;
  mediaIds?: string[] | undefined;
  accountIds?: string[] | undefined;
  /** With accountIds: the new targets' formats. */
  formats?: PostFormat[] | undefined;
  /** Without accountIds: the format every target takes. */
  format?: PostFormat | undefined;
  /** undefined: unchanged; null: cleared. */
  reel?: ReelView | null | undefined;
  title?: string | undefined;
  /** undefined: unchanged; null: cleared. */
  scheduleAt?: Date | null | undefined;
  externalRef?: string | undefined;
  options?: Record<string, unknown> | undefined;
}

/** An ISO-8601 instant of a request, or null when it is empty. */
export function dateOrNull(text: string | undefined, field: string): Date | null {
  if (!text) return null;
  const date = new Date(text);
  if (Number.isNaN(date.getTime())) throw errors.validation(field, `${field} must be an ISO-8601 timestamp`);
  return date;
}

/** The post's `options` object from its JSON text. */
export function optionsOf(json: string | undefined): Record<string, unknown> {
  const value: unknown = JSON.parse(json || '{}');
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw errors.validation('options', 'options must be an object');
  return value as Record<string, unknown>;
}

/** The status a post starts in: a draft, scheduled for later, or publishing now. */
export function initialStatus(input: Pick<PostInput, 'draft' | 'scheduleAt'>, now: Date) {
  if (input.draft) return 'draft';
  return input.scheduleAt && input.scheduleAt > now ? 'scheduled' : 'publishing';
}

/** A change of a post from its request: `replace_*` and `clear_schedule` say what is replaced. */
export function patchOf(req: Omit<UpdatePostRequest, '$typeName'>): PostPatch {
  const scheduleAt = req.scheduleAt ? dateOrNull(req.scheduleAt, 'schedule_at') : undefined;
  const replaced = req.replaceTargets;
  return {
    caption: req.caption,
    mediaIds: req.replaceMedia ? req.mediaIds : undefined,
    accountIds: req.replaceTargets ? req.accountIds : undefined,
    formats: replaced
      ? targetFormatsOf(req.format ?? '', req.targetFormats, req.accountIds.length)
      : undefined,
    format: !replaced && req.format ? targetFormatsOf(req.format, [], 1)[0] : undefined,
    reel: req.reelJson === undefined ? undefined : reelOf(req.reelJson),
    title: req.title,
    scheduleAt: req.clearSchedule ? null : scheduleAt,
    externalRef: req.externalRef,
    options: req.optionsJson === undefined ? undefined : optionsOf(req.optionsJson),
  };
}
