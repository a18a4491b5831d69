import { assertPageAccess, requirePageToken, requireScope } from '../auth.ts';
import { graphTime } from '../clock.ts';
import type { Ctx, RouteTable } from '../context.ts';
import { type NodeShape, paginate, renderNode } from '../fields.ts';
import { graphFailure, invalidParam, pageTokenRequired, unsupportedGet } from '../graph-errors.ts';
import { fetchMedia } from '../media-fetch.ts';
import { jsonParam, listParam, optionalBoolean, optionalString, type Params } from '../params.ts';
import type { PagePost, Photo } from '../store.ts';
import type { World } from '../world.ts';

const MAX_PHOTO_BYTES = 10 * 1024 * 1024;
const PHOTO_FORMATS = new Set(['jpeg', 'png', 'gif', 'bmp', 'tiff', 'webp']);

/** A page token of the Page, with `pages_manage_posts` (facts §3.1). */
export function pageWriter(ctx: Ctx, pageId: string) {
  const token = requirePageToken(ctx.caller(), pageId, pageTokenRequired);
  requireScope(token, 'pages_manage_posts');
  return token;
}

/** Meta fetches the photo URL; unreachable or non-image files are refused (facts §3.2). */
async function checkPhoto(world: World, url: string): Promise<void> {
  const media = await fetchMedia(url, world.config.fetchTimeoutMs);
  if (!media.ok) throw invalidParam(`(#100) url should represent a valid URL (${media.reason})`);
  if (!media.format || !PHOTO_FORMATS.has(media.format) || media.bytes > MAX_PHOTO_BYTES) {
    throw invalidParam(
      "Your photos couldn't be uploaded. Photos should be less than 4 MB and saved as JPG, PNG, GIF, TIFF, HEIF or WebP files.",
      1366046,
      { error_user_title: 'Invalid photo', error_user_msg: 'The photo is not a supported image file.' },
    );
  }
}

/** Meta scrapes a shared link; an unreachable one fails with 1609005. */
async function checkLink(world: World, link: string): Promise<void> {
  const result = await fetchMedia(link, world.config.fetchTimeoutMs);
  if (!result.ok) throw graphFailure(1609005, '(#1609005) Error Posting Link', { is_transient: false });
}

function attachedPhotos(ctx: Ctx, pageId: string): string[] {
  const raw = jsonParam(ctx.params, 'attached_media');
  const items: unknown[] = Array.isArray(raw)
    ? raw
    : listParam(ctx.params, 'attached_media').map((s) => JSON.parse(s));
  return items.map((item, i) => {
    const id = item && typeof item === 'object' ? String((item as Params).media_fbid ?? '') : '';
    const photo = ctx.world.store.photos.get(id);
    if (!photo || photo.pageId !== pageId || photo.published) {
      throw invalidParam(`(#100) param attached_media[${i}] has invalid media_fbid`);
    }
    return id;
  });
}

function newPost(
  world: World,
  pageId: string,
  fields: Omit<PagePost, 'id' | 'pageId' | 'createdAt'>,
): PagePost {
  const post: PagePost = {
    id: `${pageId}_${world.ids.pagePostPart()}`,
    pageId,
    createdAt: world.clock.now(),
    ...fields,
  };
  world.store.pagePosts.set(post.id, post);
  for (const photoId of post.photoIds) {
    const photo = world.store.photos.get(photoId);
    if (photo) Object.assign(photo, { published: true, postId: post.id });
  }
  return post;
}

function latestPost(world: World, pageId: string): PagePost | undefined {
  return [...world.store.pagePosts.values()].filter((p) => p.pageId === pageId).at(-1);
}

async function createFeedPost(ctx: Ctx, pageId: string) {
  pageWriter(ctx, pageId);
  if (!optionalBoolean(ctx.params, 'published', true)) {
    throw invalidParam('(#100) The sandbox does not support unpublished or scheduled feed posts');
  }
  const message = optionalString(ctx.params, 'message') ?? null;
  const link = optionalString(ctx.params, 'link') ?? null;
  const photoIds = attachedPhotos(ctx, pageId);
  if (!message && !link && photoIds.length === 0) throw invalidParam('(#100) Missing message or attachment');
  if (message && latestPost(ctx.world, pageId)?.message === message) {
    throw graphFailure(506, '(#506) Duplicate status message');
  }
  if (link) await checkLink(ctx.world, link);
  const post = newPost(ctx.world, pageId, { message, link, photoIds });
  return ctx.fields ? renderNode(postShape(ctx.world, post), ctx.fields) : { id: post.id };
}

async function createPhoto(ctx: Ctx, pageId: string) {
  pageWriter(ctx, pageId);
  const url = optionalString(ctx.params, 'url');
  if (!url)
    throw invalidParam(
      '(#100) The parameter url is required (the sandbox does not accept multipart `source` uploads)',
    );
  await checkPhoto(ctx.world, url);
  const caption = optionalString(ctx.params, 'caption') ?? optionalString(ctx.params, 'message') ?? null;
  const photo: Photo = {
    id: ctx.world.ids.photo(),
    pageId,
    url,
    caption,
    published: false,
    postId: null,
    createdAt: ctx.now,
  };
  ctx.world.store.photos.set(photo.id, photo);
  if (!optionalBoolean(ctx.params, 'published', true)) return { id: photo.id };
  const post = newPost(ctx.world, pageId, { message: caption, link: null, photoIds: [photo.id] });
  return { id: photo.id, post_id: post.id };
}

function postShape(world: World, post: PagePost): NodeShape {
  const photos = post.photoIds.flatMap((id) => world.store.photos.get(id) ?? []);
  const postPart = post.id.split('_')[1] ?? post.id;
  return {
    type: 'Post',
    defaults: ['created_time', 'message', 'id'],
    fields: {
      id: () => post.id,
      message: () => post.message ?? undefined,
      created_time: () => graphTime(post.createdAt),
      permalink_url: () => `${world.config.publicUrl}/${post.pageId}/posts/${postPart}`,
      full_picture: () => photos[0]?.url,
      is_published: () => true,
      status_type: () =>
        photos.length ? 'added_photos' : post.link ? 'shared_story' : 'mobile_status_update',
      link: () => post.link ?? undefined,
      from: () => ({ id: post.pageId, name: world.store.pages.get(post.pageId)?.name }),
      attachments: () =>
        photos.length
          ? {
              data: photos.map((p) => ({
                media_type: 'photo',
                target: { id: p.id },
                media: { image: { src: p.url } },
              })),
            }
          : undefined,
    },
  };
}

function listPosts(ctx: Ctx, pageId: string) {
  assertPageAccess(ctx.world, ctx.caller(), pageId);
  const posts = [...ctx.world.store.pagePosts.values()].filter((p) => p.pageId === pageId).reverse();
  return paginate(posts, ctx.pageRequest(), (p) => renderNode(postShape(ctx.world, p), ctx.fields));
}

export const pageRoutes: RouteTable = {
  'POST page/feed': createFeedPost,
  'POST page/photos': createPhoto,
  'GET page/feed': listPosts,
  'GET page/published_posts': listPosts,
  'GET page_post': (ctx, id) => {
    const post = ctx.world.store.pagePosts.get(id);
    if (!post) throw unsupportedGet(id);
    assertPageAccess(ctx.world, ctx.caller(), post.pageId);
    return renderNode(postShape(ctx.world, post), ctx.fields);
  },
  'GET photo': (ctx, id) => {
    const photo = ctx.world.store.photos.get(id);
    if (!photo) throw unsupportedGet(id);
    assertPageAccess(ctx.world, ctx.caller(), photo.pageId);
    const shape: NodeShape = {
      type: 'Photo',
      defaults: ['id', 'created_time'],
      fields: {
        id: () => photo.id,
        created_time: () => graphTime(photo.createdAt),
        name: () => photo.caption ?? undefined,
        images: () => [{ source: photo.url }],
        page_story_id: () => photo.postId ?? undefined,
      },
    };
    return renderNode(shape, ctx.fields);
  },
};
