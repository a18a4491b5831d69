import { z } from 'zod';
import { timestamp } from './shared.ts';

/** A workspace as partners see it (spec 2.1), defined once: identity builds it, the gateway answers it as it is. */
export const workspaceView = z
  .object({
    id: z.string(),
    external_id: z.string().nullable(),
    name: z.string(),
    timezone: z.string().describe('IANA time zone'),
    settings: z.record(z.string(), z.unknown()).describe('free-form JSON object kept for the partner'),
    created: timestamp,
    updated: timestamp,
  })
  .meta({ id: 'Workspace' });

export type WorkspaceView = z.infer<typeof workspaceView>;
