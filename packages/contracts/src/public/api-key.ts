import { z } from 'zod';
import { timestamp } from './shared.ts';

/** A workspace key as partners see it, defined once: identity builds it (never the plain key). */
export const apiKeyView = z
  .object({
    id: z.string(),
    prefix: z.string().describe('the first characters of the key, to recognise it'),
    label: z.string(),
    last_used_at: timestamp.nullable(),
    created: timestamp,
  })
  .meta({ id: 'ApiKey' });

export type ApiKeyView = z.infer<typeof apiKeyView>;

/** The answer to minting a key: the only one that carries the plain key. */
export const createdApiKeyView = z.object({
  id: z.string(),
  key: z.string(),
  prefix: z.string(),
  label: z.string(),
  created: timestamp,
});

export type CreatedApiKeyView = z.infer<typeof createdApiKeyView>;
