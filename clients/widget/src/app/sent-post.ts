import { useEffect, useState } from 'preact/hooks';
import type { Page } from './api.ts';
import { type Ctx, eventData, type PostView } from './context.ts';
import { RECONNECTED } from './stream.ts';

/**
 * The post this composer sent last, kept current by the stream: each `post.*` event about it
 * (published, partial, failed) carries the whole post with its targets' outcomes and permalinks.
 * After a reconnection, which may have missed one, the post is read again.
 */
export function useSentPost(ctx: Ctx): [PostView | null, (post: PostView) => void] {
  const [sent, setSent] = useState<PostView | null>(null);
  const sentId = sent?.id;
  const created = sent?.created;

  useEffect(() => {
    if (!sentId || !created) return;
    const replace = (post: PostView | undefined) => {
      if (post?.id === sentId) setSent(post);
    };
    return ctx.subscribe((event) => {
      if (event.type.startsWith('post.')) replace(eventData(event).post);
      if (event.type === RECONNECTED)
        void reread(ctx, created).then((posts) => replace(posts.find((p) => p.id === sentId)));
    });
  }, [sentId, created]);

  return [sent, setSent];
}

/** The posts made since just before `created` (oldest first: this one is among the first). */
async function reread(ctx: Ctx, created: string): Promise<PostView[]> {
  const since = new Date(Date.parse(created) - 1).toISOString();
  try {
    const page = await ctx.api.get<Page<PostView>>(
      `/posts?created_after=${encodeURIComponent(since)}&limit=20`,
    );
    return page.data;
  } catch {
    return [];
  }
}
