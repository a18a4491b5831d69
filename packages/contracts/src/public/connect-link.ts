import { z } from 'zod';
import { network, timestamp } from './shared.ts';

/** A connect link as partners see it, defined once: accounts builds it (the URL carries its secret). */
export const connectLinkView = z
  .object({
    id: z.string(),
    workspace: z.string(),
    url: z.string().describe('the hosted connect page; send the end user here'),
    networks: z.array(network),
    redirect_url: z.string().nullable(),
    expires_at: timestamp,
    created: timestamp,
  })
  .meta({ id: 'ConnectLink' });

export type ConnectLinkView = z.infer<typeof connectLinkView>;
