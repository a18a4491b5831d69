import { errors } from '@svc/errors';
import type { Caller as CallerMessage } from './gen/svc/common/v1/caller_pb.ts';
import type { Idempotency } from './gen/svc/common/v1/idempotency_pb.ts';

/**
 * A request's caller as the owning services scope by it: the shape of @svc/db's `Caller`, given
 * structurally so that neither package has to depend on the other. A scoped request without one
 * did not come through the gateway, so it is refused rather than read as "every partner".
 */
export function callerOf(message: CallerMessage | undefined): { partnerId: string; workspaceId: string } {
  if (!message?.partnerId) throw errors.unauthorized('no caller');
  return { partnerId: message.partnerId, workspaceId: message.workspaceId };
}

/**
 * A write's claim of an idempotency key, as the gateway makes it and the services that keep their
 * own (publishing for posts, inbox for sends) receive it: the record's id (key, caller and what was
 * called, hashed) and what was asked, hashed.
 */
export type IdempotencyClaim = Pick<Idempotency, 'key' | 'requestHash'>;
