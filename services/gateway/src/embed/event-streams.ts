import { randomUUID } from 'node:crypto';
import { PassThrough, type Readable } from 'node:stream';
import { type Bus, eventEnvelopeSchema, STREAMS, SUBJECTS } from '@svc/bus';
import type { EmbedSurface } from '@svc/contracts/public';
import type { Logger } from '@svc/logging';
import type { Principal } from '../auth/principal.ts';
import type { StreamSlot, StreamSlots } from './stream-slots.ts';

export interface StreamOptions {
  /** A comment line this often, so proxies keep the stream open and dead clients show. */
  heartbeatMs: number;
  /** How often each stream asks whether its session still holds (see session-check.ts). */
  recheckMs: number;
  /** A stream whose client reads this far behind is dropped (it reconnects and reloads). */
  maxBufferedBytes: number;
}

/** Whether the session behind a token hash still holds. */
export type SessionCheck = (tokenHash: string) => Promise<boolean>;

/** Which surface an event belongs to, by its type; events of no surface are not streamed. */
function surfaceOf(type: string): EmbedSurface | undefined {
  // The partner's `account.changed` tells of a status change the internal signal below already
  // brought (the widget reloads on either): streaming both would be two frames for one change.
  if (type === SUBJECTS.accountStatusChanged.name) return undefined;
  if (type.startsWith('account.') || type === SUBJECTS.accountChanged.name) return 'connect';
  if (type.startsWith('message.') || type.startsWith('comment.')) return 'inbox';
  if (type.startsWith('post.')) return 'publish';
  return undefined;
}

/** `accounts.changed` (an internal signal) reaches the widget as `account.changed`. */
const widgetType = (type: string) => (type === SUBJECTS.accountChanged.name ? 'account.changed' : type);

interface OpenStream {
  principal: Principal;
  out: PassThrough;
  timers: NodeJS.Timeout[];
  slot: StreamSlot;
}

/**
 * The widget's live view (GET /v1/embed/stream): Server-Sent Events of its workspace's inbox,
 * account and post events. Each gateway subscribes once (plain NATS subscriptions on the event
 * subjects, which JetStream's publishes reach too) and fans out by workspace to the streams it
 * holds, so replicas scale without per-stream consumers. An event arrives only while a stream is
 * open (the subscriptions are made with the first): the widget reloads its lists when it
 * (re)connects. A stream ends with
 * `event: session.expired` when its session expires, is ended or loses its workspace; at gateway
 * stop it just ends, and the widget reconnects to another replica.
 */
export class EmbedStreams {
  private readonly byWorkspace = new Map<string, Set<OpenStream>>();
  private readonly subscriptions: { unsubscribe(): void }[] = [];
  /** Settles once the server has the subscriptions (a stream says `connected` only then). */
  private subscribed: Promise<void> = Promise.resolve();

  constructor(
    private readonly bus: Bus,
    private readonly logger: Logger,
    private readonly options: StreamOptions,
    private readonly slots: StreamSlots,
    private readonly sessionHolds: SessionCheck,
  ) {}

  /**
   * Subscribed only while this gateway holds a stream: every event of every partner passes here,
   * and parsing them for nobody cost the gateway CPU on each post in bench:publish.
   */
  private subscribe(): void {
    const eventSubjects = [...STREAMS.events.subjects, SUBJECTS.accountChanged.name];
    for (const subject of eventSubjects) this.listen(subject, (type, event) => this.fanOut(type, event));
    this.listen(SUBJECTS.embedSessionEnded.name, (_type, signal) =>
      this.endWhere(signal.workspace, (s) => s.principal.keyId === sessionIdOf(signal), 'ended'),
    );
    this.listen(SUBJECTS.workspaceDeleted.name, (_type, signal) =>
      this.endWhere(signal.workspace, () => true, 'ended'),
    );
    this.subscribed = this.bus.nc.flush().catch(() => {});
  }

  private unsubscribe(): void {
    for (const subscription of this.subscriptions) subscription.unsubscribe();
    this.subscriptions.length = 0;
  }

  /**
   * Opens a stream for an embed session (its token's hash lets the stream re-check the session);
   * refused with 429 when the session or its partner already holds its share of streams. It
   * closes when the client goes away.
   */
  async open(principal: Principal, tokenHash: string): Promise<Readable> {
    const slot = await this.slots.open(randomUUID(), principal.keyId, principal.partnerId);
    const workspace = principal.workspaceId ?? '';
    const stream: OpenStream = { principal, out: new PassThrough(), timers: [], slot };
    const { heartbeatMs, recheckMs } = this.options;
    stream.timers.push(setInterval(() => this.heartbeat(stream), heartbeatMs));
    stream.timers.push(setInterval(() => this.recheck(stream, tokenHash), recheckMs));
    const expiresInMs = (principal.embed?.expiresAtMs ?? 0) - Date.now();
    stream.timers.push(setTimeout(() => this.end(stream, 'expired'), Math.max(0, expiresInMs)));
    for (const timer of stream.timers) timer.unref();
    if (this.byWorkspace.size === 0) this.subscribe();
    const set = this.byWorkspace.get(workspace) ?? new Set();
    set.add(stream);
    this.byWorkspace.set(workspace, set);
    // Once events can arrive, so the client sees the answer start; `retry` paces an EventSource's reconnects.
    void this.subscribed.then(() => this.write(stream, ': connected\nretry: 3000\n\n'));
    stream.out.on('close', () => this.forget(stream));
    return stream.out;
  }

  private heartbeat(stream: OpenStream): void {
    this.write(stream, ': heartbeat\n\n');
    stream.slot.renew().catch(() => {});
  }

  private async recheck(stream: OpenStream, tokenHash: string): Promise<void> {
    if (stream.out.writableEnded || (await this.sessionHolds(tokenHash))) return;
    this.logger.info({ session: stream.principal.keyId }, 'embed stream: its session no longer holds; ended');
    this.end(stream, 'ended');
  }

  /** Open streams on this gateway (for tests and metrics). */
  get size(): number {
    let count = 0;
    for (const set of this.byWorkspace.values()) count += set.size;
    return count;
  }

  /** At gateway stop: no more events; every stream ends so the server can close. */
  close(): void {
    this.unsubscribe();
    for (const set of [...this.byWorkspace.values()]) for (const stream of set) stream.out.end();
  }

  private listen(subject: string, handle: (type: string, event: Envelope) => void): void {
    const { bus } = this;
    const subscription = bus.nc.subscribe(bus.subjects.subject(subject), {
      callback: (error, message) => {
        if (error) return;
        const parsed = eventEnvelopeSchema.safeParse(jsonOf(message.string()));
        if (parsed.success) handle(bus.subjects.typeOf(message.subject), parsed.data);
      },
    });
    this.subscriptions.push(subscription);
  }

  private fanOut(type: string, event: Envelope): void {
    const surface = surfaceOf(type);
    const streams = event.workspace ? this.byWorkspace.get(event.workspace) : undefined;
    if (!surface || !streams) return;
    // The partner's own scope (slug, external_id) stays out of what the end user's browser sees.
    const data = JSON.stringify({
      id: event.id,
      type: widgetType(type),
      created_at: event.created_at,
      data: event.data,
    });
    const frame = `id: ${event.id}\nevent: ${widgetType(type)}\ndata: ${data}\n\n`;
    for (const stream of streams)
      if (stream.principal.embed?.surfaces.includes(surface)) this.write(stream, frame);
  }

  private endWhere(workspace: string | null, match: (stream: OpenStream) => boolean, reason: string): void {
    for (const stream of this.byWorkspace.get(workspace ?? '') ?? [])
      if (match(stream)) this.end(stream, reason);
  }

  private end(stream: OpenStream, reason: string): void {
    this.write(stream, `event: session.expired\ndata: ${JSON.stringify({ reason })}\n\n`);
    stream.out.end();
    this.forget(stream);
  }

  private write(stream: OpenStream, frame: string): void {
    if (stream.out.writableEnded) return;
    if (stream.out.writableLength > this.options.maxBufferedBytes) {
      this.logger.warn({ session: stream.principal.keyId }, 'embed stream too far behind: dropped');
      stream.out.destroy();
      return;
    }
    stream.out.write(frame);
  }

  /** Once per stream (ending it and its client leaving both come here). */
  private forget(stream: OpenStream): void {
    const workspace = stream.principal.workspaceId ?? '';
    const set = this.byWorkspace.get(workspace);
    if (!set?.delete(stream)) return;
    for (const timer of stream.timers) clearTimeout(timer);
    void stream.slot.release();
    if (set.size === 0) this.byWorkspace.delete(workspace);
    if (this.byWorkspace.size === 0) this.unsubscribe();
  }
}

type Envelope = ReturnType<typeof eventEnvelopeSchema.parse>;

function sessionIdOf(signal: Envelope): string | undefined {
  const session = signal.data.session as { id?: unknown } | undefined;
  return typeof session?.id === 'string' ? session.id : undefined;
}

function jsonOf(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
