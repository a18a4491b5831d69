import type { Bus } from '@svc/bus';
import type { PostView } from '@svc/contracts/public';

type Subscription = ReturnType<Bus['nc']['subscribe']>;

const SETTLED = ['published', 'partial', 'failed'];

/**
 * `wait=true`: callers wait for their post's `post.*` event on NATS (whichever replica settled it),
 * not by polling the database. One subscription serves every caller of this process and exists
 * only while someone waits, so idle replicas do not read every post event.
 */
type Wake = (post: PostView | undefined) => void;

export class SettlementWatch {
  private readonly waiters = new Map<string, Set<Wake>>();
  private subscription: Subscription | undefined;

  constructor(
    private readonly bus: Bus,
    private readonly statusOf: (postId: string) => Promise<string | undefined>,
  ) {}

  /**
   * Resolves when the post settles or after `ms`, whichever comes first: with the post as its
   * event shows it (exactly what GET shows), or undefined when there is nothing newer to show.
   */
  async wait(postId: string, ms: number): Promise<PostView | undefined> {
    if (ms <= 0) return undefined;
    let wake: Wake = () => {};
    const settled = new Promise<PostView | undefined>((resolve) => {
      wake = resolve;
    });
    const timer = setTimeout(() => wake(undefined), ms);
    this.add(postId, wake);
    try {
      // Subscribed first, read second: a settlement just before the subscription is not missed.
      await this.subscribed();
      const status = await this.statusOf(postId);
      return status && !SETTLED.includes(status) ? await settled : undefined;
    } finally {
      clearTimeout(timer);
      this.remove(postId, wake);
    }
  }

  private add(postId: string, wake: Wake): void {
    const set = this.waiters.get(postId) ?? new Set();
    set.add(wake);
    this.waiters.set(postId, set);
  }

  private remove(postId: string, wake: Wake): void {
    const set = this.waiters.get(postId);
    set?.delete(wake);
    if (set?.size === 0) this.waiters.delete(postId);
    if (this.waiters.size === 0) {
      this.subscription?.unsubscribe();
      this.subscription = undefined;
    }
  }

  /** The shared subscription, registered with the server (flushed) before this resolves. */
  private async subscribed(): Promise<void> {
    if (!this.subscription) {
      this.subscription = this.bus.nc.subscribe(this.bus.subjects.subject('post.>'), {
        callback: (error, message) => {
          if (error) return;
          const post = postOf(message.data);
          for (const wake of (post && this.waiters.get(post.id)) || []) wake(post);
        },
      });
    }
    await this.bus.nc.flush();
  }
}

function postOf(data: Uint8Array): PostView | undefined {
  try {
    return (JSON.parse(Buffer.from(data).toString()) as { data?: { post?: PostView } }).data?.post;
  } catch {
    return undefined; // not an event of ours: nobody waits on it
  }
}
