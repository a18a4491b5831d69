import { workspaceView } from '@svc/contracts/public';
import { errors } from '@svc/errors';
import { z } from 'zod';
import type { Principal } from '../auth/principal.ts';
import type { IdentityClient } from '../clients.ts';
import { jsonText, pagedJsonText } from '../http/json-text.ts';
import { paged, pagination, pathId } from '../http/schemas.ts';
import { type AnyOperation, answered, defineOperation } from './operation.ts';

const externalId = z.string().min(1).max(255);
// A body's settings are the record's own field: the same type and description.
const { settings } = workspaceView.shape;

const workspaceIdParams = z.strictObject({ id: pathId('workspace', 'workspace') });

/**
 * `external_id` is the partner's reference, the key of its idempotent create: a workspace key
 * setting it could claim a future customer's id (and the 409 on a taken one would tell it which
 * ids exist), so only a partner key may set or change it.
 */
function onlyPartnerSetsExternalId(principal: Principal): void {
  if (principal.kind !== 'partner')
    throw errors.forbidden(
      "external_id is the partner's own reference: only a partner key may set or change it. Leave external_id out of the request",
    );
}

export function workspaceOperations(identity: IdentityClient): AnyOperation[] {
  return [
    defineOperation({
      method: 'POST',
      url: '/v1/workspaces',
      summary: 'Create a workspace (200 with the existing one when the external_id is already known)',
      permission: 'workspaces',
      body: z.strictObject({
        name: z.string().min(1).max(200),
        // Spec 2.1: external_id "may be null": null, like leaving it out, is a workspace without one.
        external_id: externalId.nullable().optional(),
        timezone: z.string().min(1).max(64).default('UTC'),
        settings: settings.default({}),
      }),
      status: 201,
      alternateStatus: [200],
      response: workspaceView,
      async run({ principal, body }) {
        const { workspaceJson, created } = await identity.createWorkspace({
          partnerId: principal.partnerId,
          externalId: body.external_id ?? undefined,
          name: body.name,
          timezone: body.timezone,
          settingsJson: JSON.stringify(body.settings),
        });
        return answered(jsonText(workspaceJson), { status: created ? 201 : 200 });
      },
    }),
    defineOperation({
      method: 'GET',
      url: '/v1/workspaces',
      summary: 'List workspaces, oldest first',
      permission: 'workspaces',
      query: z.strictObject({ ...pagination, external_id: externalId.optional() }),
      status: 200,
      response: paged(workspaceView),
      async run({ principal, query }) {
        const { workspacesJson, total } = await identity.listWorkspaces({
          partnerId: principal.partnerId,
          externalId: query.external_id,
          page: query.page,
          limit: query.limit,
        });
        return pagedJsonText(workspacesJson, query.page, query.limit, total);
      },
    }),
    defineOperation({
      method: 'GET',
      url: '/v1/workspaces/:id',
      summary: 'Read a workspace',
      permission: 'workspace',
      params: workspaceIdParams,
      workspaceIn: 'params',
      status: 200,
      response: workspaceView,
      async run({ principal, params }) {
        const { workspaceJson } = await identity.getWorkspace({
          partnerId: principal.partnerId,
          workspaceId: params.id,
        });
        return jsonText(workspaceJson);
      },
    }),
    defineOperation({
      method: 'PATCH',
      url: '/v1/workspaces/:id',
      summary: 'Update a workspace (only the fields sent change; external_id null clears it)',
      permission: 'workspace',
      params: workspaceIdParams,
      workspaceIn: 'params',
      body: z.strictObject({
        name: z.string().min(1).max(200).optional(),
        external_id: externalId
          .nullable()
          .optional()
          .describe(
            "the partner's own id for the workspace; null clears it. Partner key only: a workspace key sending it gets 403 forbidden",
          ),
        timezone: z.string().min(1).max(64).optional(),
        settings: settings.optional(),
      }),
      status: 200,
      response: workspaceView,
      async run({ principal, params, body }) {
        if (body.external_id !== undefined) onlyPartnerSetsExternalId(principal);
        const { workspaceJson } = await identity.updateWorkspace({
          partnerId: principal.partnerId,
          workspaceId: params.id,
          name: body.name,
          timezone: body.timezone,
          settingsJson: body.settings === undefined ? undefined : JSON.stringify(body.settings),
          externalId: body.external_id ?? undefined,
          clearExternalId: body.external_id === null,
        });
        return jsonText(workspaceJson);
      },
    }),
    defineOperation({
      method: 'DELETE',
      url: '/v1/workspaces/:id',
      summary: 'Delete a workspace and everything in it; irreversible',
      permission: 'workspace',
      params: workspaceIdParams,
      workspaceIn: 'params',
      status: 204,
      async run({ principal, params }) {
        await identity.deleteWorkspace({ partnerId: principal.partnerId, workspaceId: params.id });
      },
    }),
  ];
}
