import type { CachedPrincipal } from '@svc/auth-cache';

export interface Principal {
  kind: 'partner' | 'workspace';
  keyId: string;
  partnerId: string;
  partnerSlug: string;
  /** Set for a workspace key. */
  workspaceId: string | null;
}

export function fromCached(cached: CachedPrincipal): Principal {
  return {
    kind: cached.workspace_id ? 'workspace' : 'partner',
    keyId: cached.key_id,
    partnerId: cached.partner_id,
    partnerSlug: cached.partner_slug,
    workspaceId: cached.workspace_id || null,
  };
}

/** The gRPC `Caller` the owning services scope requests by (an empty workspace id: a partner key). */
export const grpcCaller = (principal: Principal) => ({
  partnerId: principal.partnerId,
  workspaceId: principal.workspaceId ?? '',
});
