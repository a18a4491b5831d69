import { type PostFormat, postFormat, type ReelView, reelView } from '@svc/contracts/public';
import { errors } from '@svc/errors';

/**
 * Each target's format (issue 28): the target's own, else the post's, else `feed`. `own` is the
 * request's list beside the account ids ("" where a target names none).
 */
export function targetFormatsOf(postFormatText: string, own: readonly string[], count: number): PostFormat[] {
  const fallback = formatOf(postFormatText || 'feed', 'format');
  return Array.from({ length: count }, (_, index) => {
    const text = own[index] ?? '';
    return text ? formatOf(text, `targets.${index}.format`) : fallback;
  });
}

function formatOf(text: string, field: string): PostFormat {
  const parsed = postFormat.safeParse(text);
  if (!parsed.success) throw errors.validation(field, `${field} must be feed, reel or story`);
  return parsed.data;
}

/** A post's Reel settings from the request's JSON text ("" or "null": none). */
export function reelOf(json: string | undefined): ReelView | null {
  if (!json || json === 'null') return null;
  const parsed = reelView.safeParse(JSON.parse(json));
  if (!parsed.success)
    throw errors.validation('reel', 'reel must be { share_to_feed, cover, collaborators, location }');
  return parsed.data;
}
