import type { FastifyInstance } from 'fastify';
import { escapeHtml } from './html.ts';
import type { World } from './world.ts';

// A 1×1 transparent GIF: avatars and profile pictures need a URL that answers with an image.
const PIXEL = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');

const page = (title: string, body: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head><body>${body}</body></html>`;

/** Permalinks the sandbox hands out resolve to a small page, so links in the product can be clicked. */
export function registerPublicPages(app: FastifyInstance, world: World): void {
  app.get('/__sandbox/avatar/:file', (_req, reply) => reply.type('image/gif').send(PIXEL));

  app.get<{ Params: { shortcode: string } }>('/p/:shortcode', (req, reply) => {
    const media = [...world.store.igMedia.values()].find((m) => m.shortcode === req.params.shortcode);
    reply.type('text/html; charset=utf-8');
    if (!media) return reply.code(404).send(page('Not found', "<p>Sorry, this page isn't available.</p>"));
    const images = media.mediaUrls
      .map((u) => `<img src="${escapeHtml(u)}" alt="" style="max-width:320px">`)
      .join('');
    return page(
      'Instagram (sandbox)',
      `<h1>Instagram post ${media.id}</h1><p>${escapeHtml(media.caption ?? '')}</p>${images}`,
    );
  });

  app.get<{ Params: { pageId: string; postId: string } }>('/:pageId/posts/:postId', (req, reply) => {
    const post = world.store.pagePosts.get(`${req.params.pageId}_${req.params.postId}`);
    reply.type('text/html; charset=utf-8');
    if (!post)
      return reply.code(404).send(page('Not found', "<p>This content isn't available right now.</p>"));
    const photos = post.photoIds.map((id) => world.store.photos.get(id)?.url ?? '');
    const images = photos.map((u) => `<img src="${escapeHtml(u)}" alt="" style="max-width:320px">`).join('');
    const link = post.link ? `<p><a href="${escapeHtml(post.link)}">${escapeHtml(post.link)}</a></p>` : '';
    return page(
      'Facebook (sandbox)',
      `<h1>Post ${post.id}</h1><p>${escapeHtml(post.message ?? '')}</p>${link}${images}`,
    );
  });
}
