import type { Workspace } from '@svc/contracts';
import { errors } from '@svc/errors';
import { z } from 'zod';
import type { Principal } from '../auth/principal.ts';
import type { IdentityClient } from '../clients.ts';
import { type AnyRoute, defineRoute } from '../http/route.ts';
import { paged, pagination, pathId, timestamp } from '../http/schemas.ts';

const externalId = z.string().min(1).max(255);
const settings = z.record(z.string(), z.unknown()).describe('free-form JSON object kept for the partner');

const workspaceView = z
  .object({
    id: z.string(),
    external_id: z.string().nullable(),
    name: z.string(),
    timezone: z.string().describe('IANA time zone'),
    settings,
    created: timestamp,
    updated: timestamp,
  })
  .meta({ id: 'Workspace' });

function toWorkspaceView(w: Workspace): z.infer<typeof workspaceView> {
  return {
    id: w.id,
    external_id: w.externalId ?? null,
    name: w.name,
    timezone: w.timezone,
    settings: JSON.parse(w.settingsJson) as Record<string, unknown>,
    created: w.createdAt,
    updated: w.updatedAt,
  };
}

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

export function workspaceRoutes(identity: IdentityClient): AnyRoute[] {
  return [
    defineRoute({
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
      async handler({ principal, body, reply }) {
        const { workspace, created } = await identity.createWorkspace({
          partnerId: principal.partnerId,
          externalId: body.external_id ?? undefined,
          name: body.name,
          timezone: body.timezone,
          settingsJson: JSON.stringify(body.settings),
        });
        reply.code(created ? 201 : 200);
        return toWorkspaceView(workspace as Workspace);
      },
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/workspaces',
      summary: 'List workspaces, oldest first',
      permission: 'workspaces',
      query: z.strictObject({ ...pagination, external_id: externalId.optional() }),
      status: 200,
      response: paged(workspaceView),
      async handler({ principal, query }) {
        const { workspaces, total } = await identity.listWorkspaces({
          partnerId: principal.partnerId,
          externalId: query.external_id,
          page: query.page,
          limit: query.limit,
        });
        return { data: workspaces.map(toWorkspaceView), page: query.page, limit: query.limit, total };
      },
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/workspaces/:id',
      summary: 'Read a workspace',
      permission: 'workspace',
      params: workspaceIdParams,
      status: 200,
      response: workspaceView,
      async handler({ principal, params }) {
        const { workspace } = await identity.getWorkspace({
          partnerId: principal.partnerId,
          workspaceId: params.id,
        });
        return toWorkspaceView(workspace as Workspace);
      },
    }),
    defineRoute({
      method: 'PATCH',
      url: '/v1/workspaces/:id',
      summary: 'Update a workspace (only the fields sent change; external_id null clears it)',
      permission: 'workspace',
      params: workspaceIdParams,
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
      async handler({ principal, params, body }) {
        if (body.external_id !== undefined) onlyPartnerSetsExternalId(principal);
        const { workspace } = await identity.updateWorkspace({
          partnerId: principal.partnerId,
          workspaceId: params.id,
          name: body.name,
          timezone: body.timezone,
          settingsJson: body.settings === undefined ? undefined : JSON.stringify(body.settings),
          externalId: body.external_id ?? undefined,
          clearExternalId: body.external_id === null,
        });
        return toWorkspaceView(workspace as Workspace);
      },
    }),
    defineRoute({
      method: 'DELETE',
      url: '/v1/workspaces/:id',
      summary: 'Delete a workspace and everything in it; irreversible',
      permission: 'workspace',
      params: workspaceIdParams,
      status: 204,
      async handler({ principal, params }) {
        await identity.deleteWorkspace({ partnerId: principal.partnerId, workspaceId: params.id });
      },
    }),
  ];
}
