import { graphTime } from '../clock.ts';
import type { NodeShape } from '../fields.ts';
import type { IgMedia, MediaFile } from '../store.ts';
import type { World } from '../world.ts';

/**
 * A published Instagram media as `GET /{ig-media-id}` reads it (facts §2.7): posts and carousels
 * are FEED with `/p/` permalinks, Reels are REELS with `/reel/`, stories are STORY with Instagram's
 * `/stories/{username}/{id}/` link.
 */
export function permalinkOf(world: World, media: IgMedia): string {
  const base = world.config.publicUrl;
  if (media.productType === 'REELS') return `${base}/reel/${media.shortcode}/`;
  if (media.productType === 'STORY') {
    const username = world.store.igAccounts.get(media.igId)?.username ?? media.igId;
    return `${base}/stories/${username}/${media.id}/`;
  }
  return `${base}/p/${media.shortcode}/`;
}

/** What a comment webhook says the commented media is (facts §5.6); FEED for anything else. */
export function productTypeOf(world: World, mediaId: string): string {
  return world.store.igMedia.get(mediaId)?.productType ?? 'FEED';
}

const mediaTypeOf = (file: MediaFile) => (file.kind === 'video' ? 'VIDEO' : 'IMAGE');

function childrenOf(media: IgMedia) {
  if (media.mediaType !== 'CAROUSEL_ALBUM') return undefined;
  const data = media.media.map((file, i) => ({
    id: `${media.id}${i}`,
    media_type: mediaTypeOf(file),
    media_url: file.url,
  }));
  return { data };
}

export function mediaShape(world: World, media: IgMedia): NodeShape {
  const account = world.store.igAccounts.get(media.igId);
  const comments = () => [...world.store.comments.values()].filter((c) => c.objectId === media.id);
  const first = media.media[0];
  return {
    type: 'IGMedia',
    defaults: ['id'],
    fields: {
      id: () => media.id,
      caption: () => media.caption ?? undefined,
      media_type: () => media.mediaType,
      media_product_type: () => media.productType,
      media_url: () => first?.url,
      // A video's cover: the cover_url given, else none (Meta would cut a frame).
      thumbnail_url: () => (first?.kind === 'video' ? (media.options.coverUrl ?? undefined) : undefined),
      permalink: () => permalinkOf(world, media),
      shortcode: () => media.shortcode,
      timestamp: () => graphTime(media.createdAt),
      username: () => account?.username,
      like_count: () => 0,
      comments_count: () => comments().length,
      is_comment_enabled: () => media.commentsEnabled,
      owner: () => ({ id: media.igId }),
      children: () => childrenOf(media),
    },
  };
}
