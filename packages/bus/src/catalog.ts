/**
 * The subject catalog: every stream, what it captures, and who reads it.
 * WIRE CONTRACT: subject and stream names are shared by every service and by stored data in
 * JetStream. Do not rename; add new ones.
 *
 * Subjects are the event types of spec section 6 (`account.connected`, `post.published`, ...).
 * `NATS_PREFIX` (tests, side-by-side instances) prefixes stream names and subjects alike.
 */
export const STREAMS = {
  /** Partner-facing domain events; the webhooks service stores and delivers every one. */
  events: { name: 'EVENTS', subjects: ['account.>', 'post.>', 'message.>', 'comment.>'] },
  /** Internal signals between services, never delivered to partners. */
  internal: { name: 'INTERNAL', subjects: ['workspace.>', 'key.>', 'accounts.>'] },
  /**
   * What network providers send us, as received: the gateway verifies the signature and puts the
   * raw payload here; inbox (messages, comments) and accounts (permissions) consume it.
   */
  provider: { name: 'PROVIDER', subjects: ['provider.>'] },
  /** Work queues: each message is one unit of work, removed once a worker acks it. */
  jobs: { name: 'JOBS', subjects: ['jobs.>'], workQueue: true },
} as const;

export type StreamKey = keyof typeof STREAMS;

/** Internal signal subjects. */
export const SIGNALS = {
  workspaceDeleted: 'workspace.deleted',
  /** A workspace changed (name, settings, external_id): services drop what they cached of it. */
  workspaceUpdated: 'workspace.updated',
  /**
   * An account changed in a way no partner event announces (status to or from `error`, scopes,
   * profile): services drop what they cached of it. `data.account.id`, as in account events.
   */
  accountChanged: 'accounts.changed',
  /** A verified Meta webhook POST: `{ received_at, body }` with `body` the raw JSON text. */
  metaWebhook: 'provider.meta.webhook',
  /** One post target to publish: `{ post_id, account_id, attempt }`. */
  publishTarget: 'jobs.publish',
} as const;

export class Subjects {
  constructor(readonly prefix: string) {}

  subject(type: string): string {
    return this.prefix ? `${this.prefix}.${type}` : type;
  }

  /** The event type a prefixed subject stands for. */
  typeOf(subject: string): string {
    return this.prefix && subject.startsWith(`${this.prefix}.`)
      ? subject.slice(this.prefix.length + 1)
      : subject;
  }

  streamName(key: StreamKey): string {
    return `${this.prefix}${STREAMS[key].name}`;
  }

  streamSubjects(key: StreamKey): string[] {
    return STREAMS[key].subjects.map((s) => this.subject(s));
  }
}
