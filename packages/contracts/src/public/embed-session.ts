import { z } from 'zod';
import { timestamp } from './shared.ts';

/** What an embed session lets the widget do. */
export const embedSurface = z.enum(['connect', 'inbox', 'publish']);
export type EmbedSurface = z.infer<typeof embedSurface>;

/** An embed session as partners see it, defined once: identity builds it (never the token). */
export const embedSessionView = z
  .object({
    id: z.string(),
    workspace: z.string(),
    surfaces: z.array(embedSurface),
    allowed_origins: z.array(z.string()).describe('the origins whose pages may frame the widget'),
    expires_at: timestamp,
    created: timestamp,
  })
  .meta({ id: 'EmbedSession' });

export type EmbedSessionView = z.infer<typeof embedSessionView>;

/** The answer to minting a session: the only one that carries its token. */
export const createdEmbedSessionView = embedSessionView.extend({
  token: z.string().describe('the sve_ token; shown only here'),
});

export type CreatedEmbedSessionView = z.infer<typeof createdEmbedSessionView>;
