import { z } from '@svc/config';
import type { FastifyInstance } from 'fastify';
import { ControlError, parseBody } from './control-errors.ts';
import { changePermission } from './permission-changes.ts';
import type { World } from './world.ts';

const holdBody = z.object({
  account_id: z.string().regex(/^\d+$/).optional(),
  kind: z.enum(['message', 'echo', 'comment']).optional(),
  times: z.number().int().min(1).max(1000).default(1),
});
/** `?webhook=false`: the change is made without telling the app (a permission dropped silently). */
const permissionQuery = z.object({ webhook: z.enum(['true', 'false']).default('true') });
const permissionName = z.string().regex(/^[a-z_]{1,64}$/);

/**
 * Control routes for what Meta does not always do: deliver a webhook (withheld ones, see
 * webhook-holds.ts), and keep a grant whole (one permission revoked or dropped, see
 * permission-changes.ts).
 */
export function registerDeliveryControl(app: FastifyInstance, world: World): void {
  app.post('/__sandbox/webhooks/withhold', (req, reply) => {
    const body = parseBody(holdBody, req.body);
    const hold = { accountId: body.account_id ?? null, kind: body.kind ?? null, remaining: body.times };
    world.store.webhookHolds.push(hold);
    return reply.code(201).send({ hold: { account_id: hold.accountId, kind: hold.kind, times: body.times } });
  });
  app.delete('/__sandbox/webhooks/withhold', () => {
    const cleared = world.store.webhookHolds.length;
    world.store.webhookHolds = [];
    return { cleared };
  });

  const permissionRoute = (verb: 'revoked' | 'granted') => {
    return async (req: { params: { id: string; permission: string }; query: unknown }) => {
      const { id, permission } = req.params;
      if (!permissionName.safeParse(permission).success)
        throw new ControlError(400, 'permission: not a permission name');
      if (!world.store.grants.has(id))
        throw new ControlError(404, 'grant not found (an unknown user, or one who removed the app)');
      const notify = parseBody(permissionQuery, req.query).webhook === 'true';
      const webhook = await changePermission(world, id, permission, verb, notify);
      return { permission, status: verb, webhook };
    };
  };
  app.delete<{ Params: { id: string; permission: string } }>(
    '/__sandbox/users/:id/permissions/:permission',
    permissionRoute('revoked'),
  );
  app.post<{ Params: { id: string; permission: string } }>(
    '/__sandbox/users/:id/permissions/:permission',
    permissionRoute('granted'),
  );
}
