import { SIGNALS } from './catalog.ts';
import type { Bus } from './connection.ts';

/** What an event envelope says of its workspace (spec 6): partner slug and current external_id. */
export interface EventScope {
  partner: string;
  workspace: string;
  external_id: string | null;
}

/** Never keep a scope longer than this, even if an announcement of a change was missed. */
const MAX_AGE_MS = 60_000;
const MAX_ENTRIES = 10_000;

/**
 * Workspace scopes for event envelopes, cached: every settled post needs one, and asking identity
 * each time was a gRPC call per event. Identity announces `workspace.updated` and
 * `workspace.deleted` with the change (through its outbox); a plain NATS subscription drops the
 * workspace here when either arrives, so an envelope carries a stale external_id only for the
 * moment the announcement takes to arrive.
 */
export class WorkspaceScopeCache {
  private readonly scopes = new Map<string, { scope: Promise<EventScope>; at: number }>();
  private readonly subscription: ReturnType<Bus['nc']['subscribe']>;

  constructor(
    bus: Bus,
    private readonly load: (workspaceId: string) => Promise<EventScope>,
    private readonly now: () => number = Date.now,
  ) {
    const changes = [SIGNALS.workspaceUpdated, SIGNALS.workspaceDeleted];
    this.subscription = bus.nc.subscribe(bus.subjects.subject('workspace.*'), {
      callback: (error, message) => {
        if (error || !changes.includes(bus.subjects.typeOf(message.subject) as never)) return;
        this.forget(workspaceOf(message.data));
      },
    });
  }

  get(workspaceId: string): Promise<EventScope> {
    const cached = this.scopes.get(workspaceId);
    if (cached && this.now() - cached.at < MAX_AGE_MS) return cached.scope;
    if (this.scopes.size >= MAX_ENTRIES) this.scopes.clear();
    const scope = this.load(workspaceId);
    this.scopes.set(workspaceId, { scope, at: this.now() });
    // A failed load is not kept: the next event asks again.
    scope.catch(() => {
      if (this.scopes.get(workspaceId)?.scope === scope) this.forget(workspaceId);
    });
    return scope;
  }

  forget(workspaceId: string): void {
    this.scopes.delete(workspaceId);
  }

  close(): void {
    this.subscription.unsubscribe();
  }
}

function workspaceOf(data: Uint8Array): string {
  try {
    return (JSON.parse(Buffer.from(data).toString()) as { workspace?: string }).workspace ?? '';
  } catch {
    return '';
  }
}
