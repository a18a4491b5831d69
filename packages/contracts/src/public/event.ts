import { z } from 'zod';
import { accountView } from './account.ts';
import { conversationView, messageView } from './conversation.ts';
import { postView } from './post.ts';
import { timestamp } from './shared.ts';

/**
 * The events partners receive (spec section 6), each type with its `data`: what a webhook
 * delivery carries and what `GET /v1/events` lists. Defined once here so the OpenAPI document
 * (its `webhooks`) and the SDK's typed payloads describe exactly the records the services build.
 */
/** The event envelope of spec section 6: exactly the body a webhook delivery carries. */
export const eventEnvelope = z.object({
  id: z.string().describe('the same on every retry; de-duplicate by it'),
  type: z.string(),
  created_at: timestamp,
  partner: z.string().describe('partner slug'),
  workspace: z.string().nullable().describe('null for ping'),
  external_id: z.string().nullable().describe("the workspace's external_id"),
  data: z.record(z.string(), z.unknown()).describe('depends on type'),
});

/** An envelope whose `data` has the shape of its type. */
export type EventEnvelope<Data = Record<string, unknown>> = Omit<z.infer<typeof eventEnvelope>, 'data'> & {
  data: Data;
};

const accountData = z.object({ account: accountView });
const postData = z.object({ post: postView });
const inboxData = z.object({ conversation: conversationView, message: messageView });

/** Every event type with its payload, in the order of the spec's table. */
export const EVENT_DATA = {
  ping: z.object({ message: z.string(), sent_at: timestamp }),
  'account.connected': accountData,
  'account.disconnected': accountData.extend({
    reason: z
      .string()
      .optional()
      .describe(
        'deauthorized when the user removed the app at the network; token_revoked, workspace_deleted',
      ),
  }),
  'account.expired': accountData.extend({ error: z.string() }),
  'account.changed': accountData.extend({
    previous_status: z
      .string()
      .describe(
        'the status before this change; the account moved to or from error (or to another error): see account.status and account.last_error',
      ),
  }),
  'post.published': postData,
  'post.partial': postData,
  'post.failed': postData,
  'message.received': inboxData,
  'comment.received': inboxData,
  'message.sent': inboxData,
  /** A stored message or comment changed: edited, unsent or removed, hidden or shown, reacted to. */
  'message.updated': inboxData,
} as const;

export type EventType = keyof typeof EVENT_DATA;

/** `account.connected` → `AccountConnectedEvent`: the component name of each event's schema. */
const schemaName = (type: string) =>
  `${type.replace(/(^|[._])([a-z])/g, (_match, _sep, letter: string) => letter.toUpperCase())}Event`;

/** Each event type's schema: the envelope with `type` fixed and its own `data`. */
export const eventSchemas = {} as Record<EventType, z.ZodType>;
for (const type of Object.keys(EVENT_DATA) as EventType[]) {
  eventSchemas[type] = eventEnvelope
    .extend({ type: z.literal(type), data: EVENT_DATA[type] })
    .meta({ id: schemaName(type) });
}
