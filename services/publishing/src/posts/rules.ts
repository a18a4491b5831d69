import type { Network, PostFormat } from '@svc/contracts/public';
import { errors, ServiceError } from '@svc/errors';
import { checkFormatMedia, type MediaFacts } from './format-rules.ts';

/**
 * What each network accepts (facts §2.2, §2.6, §3), checked before anything is sent, so a partner
 * learns about a refusal at once with the field to fix instead of from a failed target later.
 */

interface NetworkRules {
  captionMax: number;
  hashtagsMax: number | null;
  mentionsMax: number | null;
  mediaMax: number;
  /** Width / height bounds, when the network enforces them. */
  aspect: { min: number; max: number } | null;
}

const NETWORK_RULES: Record<Network, NetworkRules> = {
  photo_network: {
    captionMax: 2200,
    hashtagsMax: 30,
    mentionsMax: 20,
    mediaMax: 10,
    aspect: { min: 0.8, max: 1.91 },
  },
  page_network: { captionMax: 63_206, hashtagsMax: null, mentionsMax: null, mediaMax: 10, aspect: null },
};

/** Throws the precise refusal for a target the network would not take in this format, or returns. */
export function checkForNetwork(
  network: Network,
  format: PostFormat,
  caption: string,
  media: MediaFacts[],
): void {
  const rules = NETWORK_RULES[network];
  if ((network === 'photo_network' || format !== 'feed') && media.length === 0)
    throw new ServiceError(
      'unsupported',
      `${network} cannot publish ${format === 'feed' ? 'text only' : `a ${format} without media`}: add at least one image or video`,
    );
  checkFormatMedia(network, format, media);
  // A Story takes no caption (facts §2.2): it is not sent, so it is not checked either.
  if (format !== 'story') checkCaption(network, rules, caption);
  if (format === 'feed') checkFeedImages(network, rules, media);
}

function checkCaption(network: Network, rules: NetworkRules, caption: string): void {
  if (caption.length > rules.captionMax)
    throw errors.validation(
      'caption',
      `${network} allows at most ${rules.captionMax} characters (this caption has ${caption.length})`,
    );
  const hashtags = caption.match(/#[\p{L}\p{N}_]+/gu)?.length ?? 0;
  if (rules.hashtagsMax !== null && hashtags > rules.hashtagsMax)
    throw errors.validation(
      'caption',
      `${network} allows at most ${rules.hashtagsMax} hashtags (this caption has ${hashtags})`,
    );
  const mentions = caption.match(/@[\w.]+/g)?.length ?? 0;
  if (rules.mentionsMax !== null && mentions > rules.mentionsMax)
    throw errors.validation(
      'caption',
      `${network} allows at most ${rules.mentionsMax} @mentions (this caption has ${mentions})`,
    );
}

function checkFeedImages(network: Network, rules: NetworkRules, media: MediaFacts[]): void {
  if (media.length > rules.mediaMax)
    throw errors.validation(
      'media',
      `${network} allows at most ${rules.mediaMax} images or videos in one post`,
    );
  media.forEach((item, index) => {
    const ratio = item.width / item.height;
    if (item.kind === 'image' && rules.aspect && (ratio < rules.aspect.min || ratio > rules.aspect.max))
      throw errors.validation(
        `media.${index}`,
        `${network} accepts images with a width/height ratio between ${rules.aspect.min} and ${rules.aspect.max}; media ${item.id} is ${item.width}×${item.height} (${ratio.toFixed(2)})`,
      );
  });
}
