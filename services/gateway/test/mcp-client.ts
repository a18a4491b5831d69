import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

/** How a test client reaches the MCP endpoint: its key, the workspace header, the revision. */
interface McpClientOptions {
  key: string;
  workspace?: string;
  /** `modern`: the 2026-07-28 revision (pinned); default: the 2025 handshake. */
  era?: 'modern' | 'legacy';
  /** A fetch of its own (to spread requests over two gateways, to count them). */
  fetch?: typeof fetch;
}

/** The official SDK's client over Streamable HTTP, connected to `url` (`.../mcp`). */
export async function mcpClient(url: string, options: McpClientOptions): Promise<Client> {
  const headers: Record<string, string> = { authorization: `Bearer ${options.key}` };
  if (options.workspace) headers['x-service-workspace'] = options.workspace;
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers },
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  const client = new Client(
    { name: 'gateway-test', version: '1.0.0' },
    options.era === 'modern' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {},
  );
  await client.connect(transport);
  return client;
}

interface ToolAnswer {
  isError: boolean;
  // biome-ignore lint/suspicious/noExplicitAny: tests read the JSON a tool answered
  value: any;
}

/**
 * Calls a tool; answers its JSON: the structured content of a result (checked to say what the
 * text block says), the error envelope of a refusal (text only: it does not match the output schema).
 */
export async function callTool(
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
): Promise<ToolAnswer> {
  const result = await client.callTool({ name, arguments: args });
  const text = (result.content as { type: string; text?: string }[]).find((c) => c.type === 'text')?.text;
  if (text === undefined) throw new Error(`${name}: no text block`);
  const fromText = JSON.parse(text);
  if (result.isError === true) {
    if (result.structuredContent !== undefined) throw new Error(`${name}: a refusal with structured content`);
    return { isError: true, value: fromText };
  }
  if (JSON.stringify(fromText) !== JSON.stringify(result.structuredContent)) {
    throw new Error(`${name}: the text block differs from the structured content`);
  }
  return { isError: false, value: result.structuredContent };
}
