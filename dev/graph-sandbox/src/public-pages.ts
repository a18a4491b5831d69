import type { FastifyInstance, FastifyReply } from 'fastify';
import { escapeHtml } from './html.ts';
import type { IgMedia, MediaFile } from './store.ts';
import type { World } from './world.ts';

// A 1×1 transparent GIF: avatars and profile pictures need a URL that answers with an image.
const PIXEL = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');

const page = (title: string, body: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head><body>${body}</body></html>`;

const fileHtml = (file: MediaFile) =>
  file.kind === 'video'
    ? `<video src="${escapeHtml(file.url)}" controls style="max-width:320px"></video>`
    : `<img src="${escapeHtml(file.url)}" alt="" style="max-width:320px">`;

function instagramPage(reply: FastifyReply, media: IgMedia | undefined) {
  reply.type('text/html; charset=utf-8');
  if (!media) return reply.code(404).send(page('Not found', "<p>Sorry, this page isn't available.</p>"));
  const what = media.productType === 'FEED' ? 'post' : media.productType === 'REELS' ? 'reel' : 'story';
  return page(
    'Instagram (sandbox)',
    `<h1>Instagram ${what} ${media.id}</h1><p>${escapeHtml(media.caption ?? '')}</p>${media.media.map(fileHtml).join('')}`,
  );
}

function facebookVideoPage(world: World, reply: FastifyReply, videoId: string | undefined) {
  const video = videoId ? world.store.pageVideos.get(videoId) : undefined;
  reply.type('text/html; charset=utf-8');
  if (!video?.url)
    return reply.code(404).send(page('Not found', "<p>This content isn't available right now.</p>"));
  const file = fileHtml({ kind: 'video', url: video.url });
  return page(
    'Facebook (sandbox)',
    `<h1>Video ${video.id}</h1><p>${escapeHtml(video.description ?? '')}</p>${file}`,
  );
}

/** Permalinks the sandbox hands out resolve to a small page, so links in the product can be clicked. */
export function registerPublicPages(app: FastifyInstance, world: World): void {
  const s = () => world.store;
  const byShortcode = (code: string) => [...s().igMedia.values()].find((m) => m.shortcode === code);
  app.get('/__sandbox/avatar/:file', (_req, reply) => reply.type('image/gif').send(PIXEL));

  app.get<{ Params: { shortcode: string } }>('/p/:shortcode', (req, reply) =>
    instagramPage(reply, byShortcode(req.params.shortcode)),
  );
  // Instagram Reels (`/reel/{shortcode}/`) and Facebook Reels (`/reel/{video-id}`) share the path.
  app.get<{ Params: { code: string } }>('/reel/:code', (req, reply) => {
    const media = byShortcode(req.params.code);
    return media ? instagramPage(reply, media) : facebookVideoPage(world, reply, req.params.code);
  });
  // Instagram stories (`/stories/{username}/{media-id}/`) and Page stories (`/stories/{page-id}/{post-id}/`).
  app.get<{ Params: { owner: string; id: string } }>('/stories/:owner/:id', (req, reply) => {
    const media = s().igMedia.get(req.params.id);
    if (media) return instagramPage(reply, media);
    const story = s().pageStories.get(req.params.id);
    const photo = story?.photoId ? s().photos.get(story.photoId) : undefined;
    if (!photo) return facebookVideoPage(world, reply, story?.videoId ?? undefined);
    reply.type('text/html; charset=utf-8');
    return page(
      'Facebook (sandbox)',
      `<h1>Story ${req.params.id}</h1>${fileHtml({ kind: 'image', url: photo.url })}`,
    );
  });
  app.get<{ Params: { pageId: string; videoId: string } }>('/:pageId/videos/:videoId', (req, reply) =>
    facebookVideoPage(world, reply, req.params.videoId),
  );

  app.get<{ Params: { pageId: string; postId: string } }>('/:pageId/posts/:postId', (req, reply) => {
    const post = s().pagePosts.get(`${req.params.pageId}_${req.params.postId}`);
    reply.type('text/html; charset=utf-8');
    if (!post)
      return reply.code(404).send(page('Not found', "<p>This content isn't available right now.</p>"));
    const photos = post.photoIds.map((id) => s().photos.get(id)?.url ?? '');
    const images = photos.map((url) => fileHtml({ kind: 'image', url })).join('');
    const link = post.link ? `<p><a href="${escapeHtml(post.link)}">${escapeHtml(post.link)}</a></p>` : '';
    return page(
      'Facebook (sandbox)',
      `<h1>Post ${post.id}</h1><p>${escapeHtml(post.message ?? '')}</p>${link}${images}`,
    );
  });
}
