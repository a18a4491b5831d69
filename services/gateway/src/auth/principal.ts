import type { CachedPrincipal } from '@svc/auth-cache';
import type { EmbedSurface } from '@svc/contracts/public';

export interface Principal {
  kind: 'partner' | 'workspace' | 'embed';
  /** The API key's id, or the embed session's id. */
  keyId: string;
  partnerId: string;
  partnerSlug: string;
  /** Set for a workspace key and an embed session. */
  workspaceId: string | null;
  /** Embed sessions only: the surfaces granted and the expiry (Unix ms). */
  embed?: { surfaces: EmbedSurface[]; expiresAtMs: number };
}

export function fromCached(cached: CachedPrincipal): Principal {
  const base = {
    keyId: cached.key_id,
    partnerId: cached.partner_id,
    partnerSlug: cached.partner_slug,
    workspaceId: cached.workspace_id || null,
  };
  if (cached.embed)
    return {
      ...base,
      kind: 'embed',
      embed: { surfaces: cached.embed.surfaces as EmbedSurface[], expiresAtMs: cached.embed.expires_at_ms },
    };
  return { ...base, kind: cached.workspace_id ? 'workspace' : 'partner' };
}

/** The gRPC `Caller` the owning services scope requests by (an empty workspace id: a partner key). */
export const grpcCaller = (principal: Principal) => ({
  partnerId: principal.partnerId,
  workspaceId: principal.workspaceId ?? '',
});
