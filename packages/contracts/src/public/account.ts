import { z } from 'zod';
import { network, timestamp } from './shared.ts';

/**
 * A connected account as partners see it (spec 2.2), defined once: accounts builds it (the token
 * never leaves that service), the gateway answers it as it is, and account events carry it as
 * `data.account`.
 */
export const accountView = z
  .object({
    id: z.string(),
    workspace: z.string(),
    network,
    platform_id: z.string().describe("the network's own id"),
    username: z.string(),
    display_name: z.string(),
    avatar_url: z.string(),
    page_id: z.string().describe('the page; for a photo-network account, its linked page'),
    status: z.string().describe('active, expired, revoked or error'),
    last_error: z.string().nullable().describe('why the account is not active, and how to fix it'),
    scopes: z.array(z.string()),
    token_expires_at: timestamp.nullable().describe('null when the token does not expire'),
    connected_at: timestamp,
  })
  .meta({ id: 'Account' });

export type AccountView = z.infer<typeof accountView>;
