import { graphTime } from './clock.ts';
import { permalinkOf } from './graph/instagram-media.ts';
import { publishedAt, videoPermalink } from './graph/page-video.ts';
import type { IgMedia, MediaFile, MediaProductType, PageStory, PageVideo, PublishOptions } from './store.ts';
import type { World } from './world.ts';

/**
 * Everything that reached the "network", oldest first, so tests can prove nothing went out twice
 * and went out as asked: every item says what it is (`media_product_type` FEED, REELS or STORY),
 * what each file is (`media`: kind and URL, `children` for carousels) and the Reel and post
 * options it was published with (null or empty where they do not apply). Page videos, Reels and
 * stories appear once live (processed, and published by the app), as `page_video`, `page_reel`
 * and `page_story`.
 */
const NO_OPTIONS: PublishOptions = {
  shareToFeed: null,
  coverUrl: null,
  thumbOffsetMs: null,
  collaborators: [],
  locationId: null,
  audioName: null,
};

interface Entry {
  type: 'instagram_media' | 'page_post' | 'page_video' | 'page_reel' | 'page_story';
  id: string;
  account_id: string;
  page_id: string | null;
  caption: string | null;
  link: string | null;
  media_type: string;
  media_product_type: MediaProductType;
  media_urls: string[];
  media: MediaFile[];
  children: MediaFile[] | null;
  title?: string | null;
  permalink: string;
  at: number;
  options?: PublishOptions;
}

function render({ at, options = NO_OPTIONS, ...entry }: Entry) {
  return {
    ...entry,
    title: entry.title ?? null,
    share_to_feed: options.shareToFeed,
    cover_url: options.coverUrl,
    thumb_offset: options.thumbOffsetMs,
    collaborators: options.collaborators,
    location_id: options.locationId,
    audio_name: options.audioName,
    published_at: graphTime(at),
    at,
  };
}

function instagramEntry(world: World, m: IgMedia): Entry {
  return {
    type: 'instagram_media',
    id: m.id,
    account_id: m.igId,
    page_id: world.store.igAccounts.get(m.igId)?.pageId ?? null,
    caption: m.caption,
    link: null,
    media_type: m.mediaType,
    media_product_type: m.productType,
    media_urls: m.media.map((f) => f.url),
    media: m.media,
    children: m.mediaType === 'CAROUSEL_ALBUM' ? m.media : null,
    permalink: permalinkOf(world, m),
    options: m.options,
    at: m.createdAt,
  };
}

function pagePostEntries(world: World): Entry[] {
  const s = world.store;
  return [...s.pagePosts.values()].map((p) => {
    const urls = p.photoIds.map((id) => s.photos.get(id)?.url ?? '');
    return {
      type: 'page_post',
      id: p.id,
      account_id: p.pageId,
      page_id: p.pageId,
      caption: p.message,
      link: p.link,
      media_type: urls.length > 1 ? 'ALBUM' : urls.length === 1 ? 'PHOTO' : p.link ? 'LINK' : 'STATUS',
      media_product_type: 'FEED',
      media_urls: urls,
      media: urls.map((url) => ({ kind: 'image', url })),
      children: null,
      permalink: `${world.config.publicUrl}/${p.pageId}/posts/${p.id.split('_')[1] ?? p.id}`,
      at: p.createdAt,
    };
  });
}

/** Feed videos and Reels once live; video stories are listed as stories. */
function pageVideoEntry(world: World, v: PageVideo): Entry[] {
  const at = publishedAt(world, v);
  if (at === null || v.kind === 'story' || v.url === null) return [];
  const reel = v.kind === 'reel';
  const file: MediaFile = { kind: 'video', url: v.url };
  return [
    {
      type: reel ? 'page_reel' : 'page_video',
      id: v.id,
      account_id: v.pageId,
      page_id: v.pageId,
      caption: v.description,
      link: null,
      media_type: 'VIDEO',
      media_product_type: reel ? 'REELS' : 'FEED',
      media_urls: [file.url],
      media: [file],
      children: null,
      title: v.title,
      permalink: videoPermalink(world, v),
      at,
    },
  ];
}

/** A photo story is live at once; a video story when its video is. */
function pageStoryEntry(world: World, story: PageStory): Entry[] {
  const s = world.store;
  const video = story.videoId ? s.pageVideos.get(story.videoId) : undefined;
  const photo = story.photoId ? s.photos.get(story.photoId) : undefined;
  const at = video ? publishedAt(world, video) : story.createdAt;
  const file: MediaFile | null = video?.url
    ? { kind: 'video', url: video.url }
    : photo
      ? { kind: 'image', url: photo.url }
      : null;
  if (at === null || file === null) return [];
  return [
    {
      type: 'page_story',
      id: story.postId,
      account_id: story.pageId,
      page_id: story.pageId,
      caption: null,
      link: null,
      media_type: file.kind === 'video' ? 'VIDEO' : 'PHOTO',
      media_product_type: 'STORY',
      media_urls: [file.url],
      media: [file],
      children: null,
      permalink: `${world.config.publicUrl}/stories/${story.pageId}/${story.postId}/`,
      at,
    },
  ];
}

export function publishedLog(world: World) {
  const s = world.store;
  const entries = [
    ...[...s.igMedia.values()].map((m) => instagramEntry(world, m)),
    ...pagePostEntries(world),
    ...[...s.pageVideos.values()].flatMap((v) => pageVideoEntry(world, v)),
    ...[...s.pageStories.values()].flatMap((story) => pageStoryEntry(world, story)),
  ];
  return entries
    .map(render)
    .sort((a, b) => a.at - b.at)
    .map(({ at: _at, ...item }) => item);
}
