/**
 * The MCP endpoint in the OpenAPI document: one JSON-RPC operation, outside `/v1` (spec 9), whose
 * tools mirror the REST operations. Described here for its authentication (`X-Service-Workspace`
 * for a partner key) and refusals; the tools themselves are listed by the endpoint (`tools/list`).
 */
export const MCP_TAG = {
  name: 'MCP',
  description:
    'The Model Context Protocol endpoint for AI agents (Streamable HTTP, stateless): the same operations as tools.',
};

const ref = (kind: string, name: string) => ({ $ref: `#/components/${kind}/${name}` });

const jsonRpcMessage = {
  type: 'object',
  required: ['jsonrpc'],
  properties: {
    jsonrpc: { const: '2.0' },
    id: { type: ['string', 'integer'] },
    method: { type: 'string', examples: ['tools/list', 'tools/call'] },
    params: { type: 'object' },
    result: { type: 'object' },
    error: { type: 'object' },
  },
};

export function mcpPath(): Record<string, unknown> {
  return {
    post: {
      operationId: 'callMcp',
      tags: [MCP_TAG.name],
      summary: 'Send an MCP message (JSON-RPC 2.0)',
      description:
        'Protocol revisions 2026-07-28, 2025-11-25 and 2025-06-18; no session (any gateway replica answers). ' +
        'A partner key names its workspace in `X-Service-Workspace`; a workspace key works in its own. ' +
        'Embed sessions are refused. Each request counts in the key’s rate limit. Also answered at `/v1/mcp`.',
      parameters: [
        {
          name: 'X-Service-Workspace',
          in: 'header',
          required: false,
          description:
            'The workspace a partner key works in (required with a partner key; with a workspace key, only its own workspace is accepted).',
          schema: { type: 'string', pattern: '^ws_[A-Za-z0-9]+$' },
        },
        ref('parameters', 'RequestId'),
      ],
      requestBody: { required: true, content: { 'application/json': { schema: jsonRpcMessage } } },
      responses: {
        '200': {
          description:
            'The JSON-RPC answer. A tool refusal is a result with `isError: true` carrying the error envelope as text.',
          content: { 'application/json': { schema: jsonRpcMessage } },
        },
        '202': { description: 'A notification or response was accepted (no answer body).' },
        '400': ref('responses', 'BadRequest'),
        '401': ref('responses', 'Unauthorized'),
        '403': ref('responses', 'Forbidden'),
        '429': ref('responses', 'RateLimited'),
      },
    },
  };
}
