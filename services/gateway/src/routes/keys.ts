import type { ApiKey } from '@svc/contracts';
import { z } from 'zod';
import type { IdentityClient } from '../clients.ts';
import { type AnyRoute, defineRoute } from '../http/route.ts';
import { paged, pageQuery, pathId, timestamp } from '../http/schemas.ts';

const keyView = z
  .object({
    id: z.string(),
    prefix: z.string().describe('the first characters of the key, to recognise it'),
    label: z.string(),
    last_used_at: timestamp.nullable(),
    created: timestamp,
  })
  .meta({ id: 'ApiKey' });

function toKeyView(k: ApiKey): z.infer<typeof keyView> {
  return {
    id: k.id,
    prefix: k.prefix,
    label: k.label,
    last_used_at: k.lastUsedAt || null,
    created: k.createdAt,
  };
}

const workspace = pathId('workspace', 'workspace');

export function keyRoutes(identity: IdentityClient): AnyRoute[] {
  return [
    defineRoute({
      method: 'POST',
      url: '/v1/workspaces/:id/keys',
      summary: 'Mint a workspace key; the plain key is in this response only',
      permission: 'workspaceKeys',
      params: z.strictObject({ id: workspace }),
      body: z.strictObject({ label: z.string().min(1).max(200) }),
      status: 201,
      response: z.object({
        id: z.string(),
        key: z.string(),
        prefix: z.string(),
        label: z.string(),
        created: timestamp,
      }),
      async handler({ principal, params, body }) {
        const { key, plainKey } = await identity.createApiKey({
          partnerId: principal.partnerId,
          workspaceId: params.id,
          label: body.label,
        });
        const view = toKeyView(key as ApiKey);
        return { id: view.id, key: plainKey, prefix: view.prefix, label: view.label, created: view.created };
      },
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/workspaces/:id/keys',
      summary: 'List the workspace keys (never the plain keys)',
      permission: 'workspaceKeys',
      params: z.strictObject({ id: workspace }),
      query: pageQuery,
      status: 200,
      response: paged(keyView),
      async handler({ principal, params, query }) {
        const { keys, total } = await identity.listApiKeys({
          partnerId: principal.partnerId,
          workspaceId: params.id,
          ...query,
        });
        return { data: keys.map(toKeyView), page: query.page, limit: query.limit, total };
      },
    }),
    defineRoute({
      method: 'DELETE',
      url: '/v1/workspaces/:id/keys/:key_id',
      summary: 'Revoke a workspace key; it stops working at once',
      permission: 'workspaceKeys',
      params: z.strictObject({ id: workspace, key_id: pathId('apiKey', 'API key') }),
      status: 204,
      async handler({ principal, params }) {
        await identity.revokeApiKey({
          partnerId: principal.partnerId,
          workspaceId: params.id,
          keyId: params.key_id,
        });
      },
    }),
  ];
}
