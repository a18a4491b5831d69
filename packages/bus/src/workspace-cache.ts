import { SIGNALS } from './catalog.ts';
import type { Bus } from './connection.ts';

/** What an event envelope says of its workspace (spec 6): partner slug and current external_id. */
export interface EventScope {
  partner: string;
  workspace: string;
  external_id: string | null;
}

/** A live workspace as other services need it: its owner, and the scope of its events. */
export interface KnownWorkspace {
  partnerId: string;
  scope: EventScope;
}

/** Never keep a workspace longer than this, even if an announcement of a change was missed. */
const MAX_AGE_MS = 60_000;
const MAX_ENTRIES = 10_000;

/**
 * Live workspaces, cached: every new post checks its workspace and every settled post needs its
 * event scope, and asking identity each time was a gRPC call each. Identity announces
 * `workspace.updated` and `workspace.deleted` with the change (through its outbox); a plain NATS
 * subscription drops the workspace here when either arrives, so a change goes unseen only for the
 * moment its announcement takes to arrive.
 */
export class WorkspaceCache {
  private readonly entries = new Map<string, { workspace: Promise<KnownWorkspace>; at: number }>();
  private readonly subscription: ReturnType<Bus['nc']['subscribe']>;

  constructor(
    bus: Bus,
    private readonly load: (workspaceId: string) => Promise<KnownWorkspace>,
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

  /** The workspace, or the loader's error (identity's not_found for a deleted one). */
  get(workspaceId: string): Promise<KnownWorkspace> {
    const cached = this.entries.get(workspaceId);
    if (cached && this.now() - cached.at < MAX_AGE_MS) return cached.workspace;
    if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
    const workspace = this.load(workspaceId);
    this.entries.set(workspaceId, { workspace, at: this.now() });
    // A failed load is not kept: the next caller asks again.
    workspace.catch(() => {
      if (this.entries.get(workspaceId)?.workspace === workspace) this.forget(workspaceId);
    });
    return workspace;
  }

  forget(workspaceId: string): void {
    this.entries.delete(workspaceId);
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
