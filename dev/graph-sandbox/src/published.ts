import { graphTime } from './clock.ts';
import type { World } from './world.ts';

/** Everything that reached the "network", oldest first, so tests can prove nothing went out twice. */
export function publishedLog(world: World) {
  const s = world.store;
  const instagram = [...s.igMedia.values()].map((m) => ({
    type: 'instagram_media' as const,
    id: m.id,
    account_id: m.igId,
    page_id: s.igAccounts.get(m.igId)?.pageId ?? null,
    caption: m.caption,
    link: null,
    media_type: m.mediaType,
    media_urls: m.mediaUrls,
    permalink: `${world.config.publicUrl}/p/${m.shortcode}/`,
    published_at: graphTime(m.createdAt),
    at: m.createdAt,
  }));
  const pages = [...s.pagePosts.values()].map((p) => ({
    type: 'page_post' as const,
    id: p.id,
    account_id: p.pageId,
    page_id: p.pageId,
    caption: p.message,
    link: p.link,
    media_type:
      p.photoIds.length > 1 ? 'ALBUM' : p.photoIds.length === 1 ? 'PHOTO' : p.link ? 'LINK' : 'STATUS',
    media_urls: p.photoIds.map((id) => s.photos.get(id)?.url ?? ''),
    permalink: `${world.config.publicUrl}/${p.pageId}/posts/${p.id.split('_')[1] ?? p.id}`,
    published_at: graphTime(p.createdAt),
    at: p.createdAt,
  }));
  return [...instagram, ...pages].sort((a, b) => a.at - b.at).map(({ at: _at, ...item }) => item);
}
