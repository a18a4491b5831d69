import { announcedKeys, type Bus, type EventScope, SUBJECTS } from '@svc/bus';
import { LocalCache } from '@svc/cache';

/** A live workspace as other services need it: its owner, and the scope of its events. */
export interface KnownWorkspace {
  partnerId: string;
  scope: EventScope;
}

/**
 * Live workspaces, cached: every new post checks its workspace and every settled post needs its
 * event scope, and asking identity each time was a gRPC call each. Identity announces
 * `workspace.updated` and `workspace.deleted` with the change (through its outbox), which drops the
 * workspace here; nothing is kept longer than a minute. A failed load (identity's not_found for a
 * deleted workspace) is not kept. Without it, identity is on the path of every post and every
 * settlement (bench:publish shows the difference in POST latency under load).
 */
export class WorkspaceCache extends LocalCache<KnownWorkspace> {
  constructor(bus: Bus, load: (workspaceId: string) => Promise<KnownWorkspace>, now?: () => number) {
    super({ load, maxAgeMs: 60_000, now });
    this.dropOn(
      announcedKeys(
        bus,
        [SUBJECTS.workspaceUpdated, SUBJECTS.workspaceDeleted],
        (signal) => signal.workspace,
      ),
    );
  }
}
