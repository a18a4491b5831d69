import type { Bus } from '@svc/bus';
import type pg from 'pg';

type Subscription = ReturnType<Bus['nc']['subscribe']>;

const SETTLED = ['published', 'partial', 'failed'];

const POST_STATUS = { name: 'publishing_post_status', text: 'SELECT status FROM posts WHERE id = $1' };

/**
 * `wait=true`: callers wait for their post's `post.*` event on NATS (whichever replica settled it),
 * not by polling the database. One subscription serves every caller of this process and exists
 * only while someone waits, so idle replicas do not read every post event.
 */
export class SettlementWatch {
  private readonly waiters = new Map<string, Set<() => void>>();
  private subscription: Subscription | undefined;

  constructor(
    private readonly bus: Bus,
    private readonly pool: pg.Pool,
  ) {}

  /** Resolves when the post settles or after `ms`, whichever comes first. */
  async wait(postId: string, ms: number): Promise<void> {
    if (ms <= 0) return;
    let wake = () => {};
    const settled = new Promise<void>((resolve) => {
      wake = resolve;
    });
    const timer = setTimeout(wake, ms);
    this.add(postId, wake);
    try {
      // Subscribed first, read second: a settlement just before the subscription is not missed.
      await this.subscribed();
      const { rows } = await this.pool.query<{ status: string }>({ ...POST_STATUS, values: [postId] });
      if (rows[0] && !SETTLED.includes(rows[0].status)) await settled;
    } finally {
      clearTimeout(timer);
      this.remove(postId, wake);
    }
  }

  private add(postId: string, wake: () => void): void {
    const set = this.waiters.get(postId) ?? new Set();
    set.add(wake);
    this.waiters.set(postId, set);
  }

  private remove(postId: string, wake: () => void): void {
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
          for (const wake of this.waiters.get(postIdOf(message.data)) ?? []) wake();
        },
      });
    }
    await this.bus.nc.flush();
  }
}

function postIdOf(data: Uint8Array): string {
  try {
    return (
      (JSON.parse(Buffer.from(data).toString()) as { data?: { post?: { id?: string } } }).data?.post?.id ?? ''
    );
  } catch {
    return ''; // not an event of ours: nobody waits on it
  }
}
