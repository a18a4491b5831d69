import { z } from 'zod';
import { timestamp } from './shared.ts';

/** A media record as partners see it (spec 2.5): what publishing builds and the gateway answers. */
export const mediaView = z
  .object({
    id: z.string(),
    workspace: z.string(),
    kind: z.string().describe('image'),
    mime: z.string().describe('detected from the bytes: image/jpeg, image/png or image/webp'),
    width: z.number().int().describe('pixels'),
    height: z.number().int().describe('pixels'),
    size: z.number().int().describe('bytes'),
    created: timestamp,
  })
  .meta({ id: 'Media' });

export type MediaView = z.infer<typeof mediaView>;
