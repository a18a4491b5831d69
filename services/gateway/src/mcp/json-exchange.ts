import {
  type AuthInfo,
  isInitializeRequest,
  isJSONRPCErrorResponse,
  isJSONRPCNotification,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  type JSONRPCMessage,
  parseJSONRPCMessage,
  type RequestId,
  SUPPORTED_PROTOCOL_VERSIONS,
  type Transport,
} from '@modelcontextprotocol/server';

/** An HTTP answer in plain terms: its status, its JSON body if it has one, extra headers. */
export interface JsonAnswer {
  status: number;
  json?: unknown;
  headers?: Record<string, string>;
}

/** The request headers a 2025-era exchange reads. */
export interface ExchangeHeaders {
  accept?: string;
  protocolVersion?: string;
}

/** As the SDK's transport: a batch of more messages is refused whole. */
export const MAX_BATCH = 100;

/** A refusal before any message is handled, in the JSON-RPC shape the SDK's transport answers. */
export const exchangeRefusal = (status: number, code: number, message: string): JsonAnswer => ({
  status,
  json: { jsonrpc: '2.0', error: { code, message }, id: null },
});

/**
 * One stateless exchange of the 2025 revisions (2025-06-18, 2025-11-25) answered as plain JSON:
 * the SDK's server reached through the SDK's `Transport` interface, with the checks and answers of
 * the SDK's stateless JSON transport (`WebStandardStreamableHTTPServerTransport` with
 * `enableJsonResponse`): both media types accepted, at most 100 messages, each a JSON-RPC message,
 * `initialize` alone, a supported `MCP-Protocol-Version`, notifications alone answered 202, and
 * the responses in the order of their requests (an array for a batch, as JSON-RPC has it). The body is
 * JSON already (the gateway's parser refuses anything else). What this saves: the web `Request`,
 * `Response` and streams the SDK's transport builds for every call, much of an MCP call's cost
 * at the gateway. Notifications the server sends while handling a request have nowhere to go in a
 * JSON answer and are dropped, as in the SDK's JSON mode.
 */
export class JsonExchange implements Transport {
  onmessage?: Transport['onmessage'];
  onclose?: () => void;
  onerror?: (error: Error) => void;
  private supported: string[] = [...SUPPORTED_PROTOCOL_VERSIONS];
  private readonly responses = new Map<RequestId, JSONRPCMessage>();
  private awaited: RequestId[] = [];
  private answered: () => void = () => {};

  setSupportedProtocolVersions(versions: string[]): void {
    this.supported = versions;
  }

  async start(): Promise<void> {}

  async close(): Promise<void> {
    this.onclose?.();
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (!isJSONRPCResultResponse(message) && !isJSONRPCErrorResponse(message)) return;
    if (message.id === undefined || !this.awaited.includes(message.id)) return;
    this.responses.set(message.id, message);
    if (this.responses.size === this.awaited.length) this.answered();
  }

  /** Hands the body's messages to the connected server and answers once each request has its response. */
  async exchange(headers: ExchangeHeaders, body: unknown, authInfo: AuthInfo): Promise<JsonAnswer> {
    const checked = this.check(headers, body);
    if ('status' in checked) return checked;
    const messages = checked.messages;
    this.awaited = awaitedIds(messages);
    if (this.awaited.length === 0) {
      for (const message of messages) this.onmessage?.(message, { authInfo });
      return { status: 202 };
    }
    const answered = new Promise<void>((resolve) => {
      this.answered = resolve;
    });
    for (const message of messages) this.onmessage?.(message, { authInfo });
    await answered;
    const responses = this.awaited.map((id) => this.responses.get(id));
    return { status: 200, json: Array.isArray(body) ? responses : responses[0] };
  }

  private check(headers: ExchangeHeaders, body: unknown): JsonAnswer | { messages: JSONRPCMessage[] } {
    const accept = headers.accept ?? '';
    if (!accept.includes('application/json') || !accept.includes('text/event-stream'))
      return exchangeRefusal(
        406,
        -32000,
        'Not Acceptable: Client must accept both application/json and text/event-stream',
      );
    if (Array.isArray(body) && body.length > MAX_BATCH)
      return exchangeRefusal(400, -32600, `Invalid Request: Batch must not exceed ${MAX_BATCH} messages`);
    let messages: JSONRPCMessage[];
    try {
      messages = (Array.isArray(body) ? body : [body]).map((message) => parseJSONRPCMessage(message));
    } catch {
      return exchangeRefusal(400, -32700, 'Parse error: Invalid JSON-RPC message');
    }
    const initializing = messages.some((message) => isInitializeRequest(message));
    if (initializing && messages.length > 1)
      return exchangeRefusal(400, -32600, 'Invalid Request: Only one initialization request is allowed');
    const version = headers.protocolVersion;
    if (!initializing && version !== undefined && !this.supported.includes(version))
      return exchangeRefusal(
        400,
        -32000,
        `Bad Request: Unsupported protocol version: ${version} (supported versions: ${this.supported.join(', ')})`,
      );
    return { messages };
  }
}

/**
 * The ids whose responses the answer waits for: each request id once (the server answers a
 * repeated id once), except a request the same batch cancels after it (a cancelled request gets
 * no response, so waiting for it would hold the exchange forever).
 */
function awaitedIds(messages: JSONRPCMessage[]): RequestId[] {
  const awaited = new Set<RequestId>();
  for (const message of messages) {
    if (isJSONRPCRequest(message)) awaited.add(message.id);
    else if (isJSONRPCNotification(message) && message.method === 'notifications/cancelled') {
      const requestId = (message.params as { requestId?: RequestId } | undefined)?.requestId;
      if (requestId !== undefined) awaited.delete(requestId);
    }
  }
  return [...awaited];
}
