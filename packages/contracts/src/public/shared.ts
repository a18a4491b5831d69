import { z } from 'zod';

/** Every instant in a public record: ISO-8601 UTC. */
export const timestamp = z.iso.datetime().describe('ISO-8601 UTC');

export const network = z.enum(['photo_network', 'page_network']);
export type Network = z.infer<typeof network>;

/** Which front door a request came through: the REST API, the widget or the MCP endpoint. */
export const requestOrigin = z.enum(['api', 'widget', 'mcp']);
export type RequestOrigin = z.infer<typeof requestOrigin>;
