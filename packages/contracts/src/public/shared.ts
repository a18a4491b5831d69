import { z } from 'zod';

/** Every instant in a public record: ISO-8601 UTC. */
export const timestamp = z.iso.datetime().describe('ISO-8601 UTC');

export const network = z.enum(['photo_network', 'page_network']);
export type Network = z.infer<typeof network>;
