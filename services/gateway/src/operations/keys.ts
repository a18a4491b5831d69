import { apiKeyView, createdApiKeyView } from '@svc/contracts/public';
import { z } from 'zod';
import type { IdentityClient } from '../clients.ts';
import { jsonText, pagedJsonText } from '../http/json-text.ts';
import { paged, pageQuery, pathId } from '../http/schemas.ts';
import { type AnyOperation, defineOperation } from './operation.ts';

const workspace = pathId('workspace', 'workspace');

export function keyOperations(identity: IdentityClient): AnyOperation[] {
  return [
    defineOperation({
      method: 'POST',
      url: '/v1/workspaces/:id/keys',
      summary: 'Mint a workspace key; the plain key is in this response only',
      permission: 'workspaceKeys',
      params: z.strictObject({ id: workspace }),
      body: z.strictObject({ label: z.string().min(1).max(200) }),
      status: 201,
      response: createdApiKeyView,
      async run({ principal, params, body }) {
        const { keyJson } = await identity.createApiKey({
          partnerId: principal.partnerId,
          workspaceId: params.id,
          label: body.label,
        });
        return jsonText(keyJson);
      },
    }),
    defineOperation({
      method: 'GET',
      url: '/v1/workspaces/:id/keys',
      summary: 'List the workspace keys (never the plain keys)',
      permission: 'workspaceKeys',
      params: z.strictObject({ id: workspace }),
      query: pageQuery,
      status: 200,
      response: paged(apiKeyView),
      async run({ principal, params, query }) {
        const { keysJson, total } = await identity.listApiKeys({
          partnerId: principal.partnerId,
          workspaceId: params.id,
          ...query,
        });
        return pagedJsonText(keysJson, query.page, query.limit, total);
      },
    }),
    defineOperation({
      method: 'DELETE',
      url: '/v1/workspaces/:id/keys/:key_id',
      summary: 'Revoke a workspace key; it stops working at once',
      permission: 'workspaceKeys',
      params: z.strictObject({ id: workspace, key_id: pathId('apiKey', 'API key') }),
      status: 204,
      async run({ principal, params }) {
        await identity.revokeApiKey({
          partnerId: principal.partnerId,
          workspaceId: params.id,
          keyId: params.key_id,
        });
      },
    }),
  ];
}
