import { z } from 'zod';
import { envelopeWith, eventEnvelopeSchema } from './envelope.ts';

/**
 * The subject catalog: every stream, what it captures, what each subject carries, and who reads it.
 * WIRE CONTRACT: subject, stream and durable consumer names are shared by every service and by
 * stored data in JetStream. Do not rename; add new ones.
 *
 * Subjects are the event types of spec section 6 (`account.connected`, `post.published`, ...).
 * `NATS_PREFIX` (tests, side-by-side instances) prefixes stream names, subjects and durables alike.
 */
export const STREAMS = {
  /** Partner-facing domain events; the webhooks service stores and delivers every one. */
  events: { name: 'EVENTS', subjects: ['account.>', 'post.>', 'message.>', 'comment.>'] },
  /** Internal signals between services, never delivered to partners. */
  internal: { name: 'INTERNAL', subjects: ['workspace.>', 'key.>', 'accounts.>', 'embed.>', 'media.>'] },
  /**
   * What network providers send us, as received: the gateway verifies the signature and puts the
   * raw payload here; inbox (messages, comments) and accounts (permissions) consume it.
   */
  provider: { name: 'PROVIDER', subjects: ['provider.>'] },
  /** Work queues: each message is one unit of work, removed once a worker acks it. */
  jobs: { name: 'JOBS', subjects: ['jobs.>'], workQueue: true },
  /**
   * Messages a consumer gave up on after its last delivery, one subject per durable
   * (`dead.<durable>`), with why (dead-letters.ts); `pnpm dead-letters` lists and replays them.
   */
  deadLetters: { name: 'DEAD_LETTERS', subjects: ['dead.>'] },
} as const;

export type StreamKey = keyof typeof STREAMS;

/** How a subject's messages are read. */
export interface ConsumerSettings {
  /** Unacked this long, a message goes to another reader (a live handler keeps extending it). */
  ackWaitMs: number;
  /**
   * Deliveries of a message whose handler fails (or never acks) before it is moved to the
   * dead-letter stream, so that it stops coming back; handlers must be idempotent.
   */
  maxDeliver: number;
  /** Wait before the n-th redelivery of a failed message (the last one repeats). */
  retryDelaysMs: readonly number[];
  /** Messages handled at once per replica; above 1, order is not kept. */
  concurrency: number;
}

/**
 * A failed message is retried for about 15 minutes in all, long enough to outlast a dependency's
 * restart or failover, and then dead-lettered.
 */
const RETRIES = {
  maxDeliver: 10,
  retryDelaysMs: [1_000, 2_000, 5_000, 15_000, 30_000, 60_000, 120_000, 300_000],
} as const;

/** One message at a time, in order (a failed one is retried later, after those behind it). */
export const IN_ORDER: ConsumerSettings = { ackWaitMs: 30_000, concurrency: 1, ...RETRIES };

export interface Subject<P> {
  /** The unprefixed subject (an event's type); `>` stands for every subject of the stream. */
  readonly name: string;
  readonly stream: StreamKey;
  readonly schema: z.ZodType<P>;
  /** What the payload is, for the line logged when a message is not one ("an event envelope"). */
  readonly payload: string;
  readonly settings: ConsumerSettings;
}

/** A work-queue subject: its rows' ids are keyed by the job, so JetStream drops a re-publish. */
export interface JobSubject<P> extends Subject<P> {
  readonly jobKey: (payload: P) => string;
}

/** A workspace signal: the envelope's `workspace` is the workspace it is about. */
const workspaceSignal = eventEnvelopeSchema.extend({ workspace: z.string() });
export type WorkspaceSignal = z.infer<typeof workspaceSignal>;

/** An account event (and `accounts.changed`): `data.account.id` is the account it is about. */
const accountEvent = envelopeWith(z.looseObject({ account: z.looseObject({ id: z.string() }) }));
export type AccountEvent = z.infer<typeof accountEvent>;

/** A post event: `data.post` is the post with its targets, as `GET /v1/posts/:id` shows it. */
const postEvent = envelopeWith(
  z.looseObject({
    post: z.looseObject({
      id: z.string(),
      targets: z.array(z.looseObject({ platform_post_id: z.string().nullable().optional() })),
    }),
  }),
);
export type PostEvent = z.infer<typeof postEvent>;

/** An inbox event (`message.*`, `comment.*`): the conversation and the message as REST shows them. */
const inboxEvent = envelopeWith(
  z.looseObject({
    conversation: z.looseObject({ id: z.string() }),
    message: z.looseObject({ id: z.string() }),
  }),
);

/** An embed session ended by its partner: `data.session.id` is the session. */
const embedSessionSignal = envelopeWith(z.looseObject({ session: z.looseObject({ id: z.string() }) }));
export type EmbedSessionSignal = z.infer<typeof embedSessionSignal>;

/** A media deleted by its partner: `data.media.id` is the media. */
const mediaSignal = envelopeWith(z.looseObject({ media: z.looseObject({ id: z.string() }) }));

/** A verified Meta webhook POST: `body` is the raw JSON text as Meta signed it. */
const metaWebhook = z.object({ received_at: z.string(), body: z.string() });
export type MetaWebhook = z.infer<typeof metaWebhook>;

/** One post target to publish, at the post's attempt number. */
const publishJob = z.object({
  post_id: z.string().min(1),
  account_id: z.string().min(1),
  attempt: z.number().int().positive(),
  /** A job queued again after a deferral: that deferral's time (epoch ms), so its key is new. */
  resumes: z.number().int().positive().optional(),
});
export type PublishJob = z.infer<typeof publishJob>;

const ENVELOPE = 'an event envelope';

const signal = <P>(name: string, stream: StreamKey, schema: z.ZodType<P>): Subject<P> => ({
  name,
  stream,
  schema,
  payload: ENVELOPE,
  settings: IN_ORDER,
});

export const SUBJECTS = {
  workspaceDeleted: signal('workspace.deleted', 'internal', workspaceSignal),
  /** A workspace changed (name, settings, external_id): services drop what they cached of it. */
  workspaceUpdated: signal('workspace.updated', 'internal', workspaceSignal),
  /**
   * An account changed in a way no partner event announces (status to or from `error`, scopes,
   * profile): services drop what they cached of it.
   */
  accountChanged: signal('accounts.changed', 'internal', accountEvent),
  /** An embed session was ended: gateways close its open streams. */
  embedSessionEnded: signal('embed.session.ended', 'internal', embedSessionSignal),
  /** A media was deleted: gateways drop the copies of its files they keep for its signed URLs. */
  mediaDeleted: signal('media.deleted', 'internal', mediaSignal),
  /** A deleted workspace's media files are gone: gateways drop every file they keep. */
  mediaPurged: signal('media.purged', 'internal', workspaceSignal),
  accountConnected: signal('account.connected', 'events', accountEvent),
  accountDisconnected: signal('account.disconnected', 'events', accountEvent),
  accountExpired: signal('account.expired', 'events', accountEvent),
  /**
   * The partner's view of an account moving to or from `error` (or to another error): `data.account`
   * with its status and `last_error`, and `data.previous_status`. Emitted beside `accounts.changed`,
   * which stays the services' cache signal (it also covers changes partners get no event for).
   */
  accountStatusChanged: signal('account.changed', 'events', accountEvent),
  /**
   * A stored message or comment changed as partners see it (edited, unsent or removed, hidden or
   * shown, reacted to), announced by inbox beside `message.received`, `comment.received` and
   * `message.sent` (all on `message.>` / `comment.>` of EVENTS).
   */
  messageUpdated: signal('message.updated', 'events', inboxEvent),
  /** Every post event (`post.published`, `post.partial`, ...). */
  postEvents: signal('post.>', 'events', postEvent),
  /** Every partner-facing event (`account.*`, `post.*`, ...), as the webhooks service stores it. */
  partnerEvents: signal('>', 'events', eventEnvelopeSchema),
  metaWebhook: {
    name: 'provider.meta.webhook',
    stream: 'provider',
    schema: metaWebhook,
    payload: 'a provider webhook',
    settings: IN_ORDER,
  } satisfies Subject<MetaWebhook>,
  publishJob: {
    name: 'jobs.publish',
    stream: 'jobs',
    schema: publishJob,
    payload: 'a publish job',
    // Publishing waits on the network, not on CPU; a job runs for minutes at most and its
    // handler's heartbeat keeps a live one from redelivery.
    settings: { ackWaitMs: 30_000, concurrency: 16, ...RETRIES },
    jobKey: (job: PublishJob) =>
      `${job.post_id}_${job.account_id}_${job.attempt}${job.resumes ? `_${job.resumes}` : ''}`,
  } satisfies JobSubject<PublishJob>,
} as const;

/** The events that announce a change of an account, for caches of accounts. */
export const ACCOUNT_ANNOUNCEMENTS = [
  SUBJECTS.accountConnected,
  SUBJECTS.accountDisconnected,
  SUBJECTS.accountExpired,
  SUBJECTS.accountChanged,
] as const;

/** Internal signal subjects by name (the `name` of the catalog's subjects). */
export const SIGNALS = {
  workspaceDeleted: SUBJECTS.workspaceDeleted.name,
  workspaceUpdated: SUBJECTS.workspaceUpdated.name,
  accountChanged: SUBJECTS.accountChanged.name,
  embedSessionEnded: SUBJECTS.embedSessionEnded.name,
  mediaDeleted: SUBJECTS.mediaDeleted.name,
  mediaPurged: SUBJECTS.mediaPurged.name,
  metaWebhook: SUBJECTS.metaWebhook.name,
  publishTarget: SUBJECTS.publishJob.name,
} as const;

/** A durable consumer: JetStream keeps its position under this name (plus the prefix). */
export interface DurableConsumer<P> {
  readonly durable: string;
  readonly subject: Subject<P>;
}

const durable = <P>(name: string, subject: Subject<P>): DurableConsumer<P> => ({ durable: name, subject });

/** Who reads what. */
export const CONSUMERS = {
  accountsWorkspaceDeleted: durable('accounts-workspace-deleted', SUBJECTS.workspaceDeleted),
  accountsProviderWebhooks: durable('accounts-provider-webhooks', SUBJECTS.metaWebhook),
  publishingWorkers: durable('publishing-workers', SUBJECTS.publishJob),
  publishingWorkspaceDeleted: durable('publishing-workspace-deleted', SUBJECTS.workspaceDeleted),
  webhooksStore: durable('webhooks-store', SUBJECTS.partnerEvents),
  // A deleted workspace's events leave the event store (those announcing the deletion after a grace).
  webhooksWorkspaceDeleted: durable('webhooks-workspace-deleted', SUBJECTS.workspaceDeleted),
  // A deleted workspace's recorded Idempotency-Key answers leave Redis.
  gatewayWorkspaceDeleted: durable('gateway-workspace-deleted', SUBJECTS.workspaceDeleted),
  inboxProviderWebhooks: durable('inbox-provider-webhooks', SUBJECTS.metaWebhook),
  inboxAccountConnected: durable('inbox-account-connected', SUBJECTS.accountConnected),
  // An account back to active from error imports what its dropped webhooks carried.
  inboxAccountChanged: durable('inbox-account-changed', SUBJECTS.accountChanged),
  inboxPostEvents: durable('inbox-post-events', SUBJECTS.postEvents),
  inboxWorkspaceDeleted: durable('inbox-workspace-deleted', SUBJECTS.workspaceDeleted),
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

  durable(consumer: { durable: string }): string {
    return `${this.prefix}${consumer.durable}`;
  }
}
