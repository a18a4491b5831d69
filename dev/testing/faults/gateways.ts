/**
 * A partner's client in front of several gateway replicas, as a load balancer spreads it: each
 * request goes to the next replica, and only a refused connection (a replica stopped or not up
 * yet) is retried on another one; a request that reached a replica and failed is not retried
 * there (it is answered, or reset). A 503 or a reset is retried after a pause with the same Idempotency-Key, as partners are told to,
 * for up to 30 s. Every answer is kept for the checks (status, error code, request id).
 */
export interface Answer {
  status: number;
  code?: string;
  path: string;
  /** The gateway's X-Request-Id (none when the connection broke). */
  requestId?: string;
}

const RETRY_503_FOR_MS = 30_000;

export class Gateways {
  readonly answers: Answer[] = [];
  private next = 0;

  constructor(
    private readonly urls: string[],
    private readonly key: string,
  ) {}

  async call(method: string, path: string, body?: unknown, idempotencyKey?: string) {
    const giveUpAt = Date.now() + RETRY_503_FOR_MS;
    for (;;) {
      const answer = await this.once(method, path, body, idempotencyKey);
      this.answers.push({
        status: answer.status,
        code: answer.body?.error?.code,
        path,
        requestId: answer.requestId,
      });
      // 0: the connection broke mid-request (a replica killed): retried, as a client retries a 502.
      if ((answer.status !== 503 && answer.status !== 0) || Date.now() > giveUpAt) return answer;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }

  private async once(method: string, path: string, body: unknown, idempotencyKey?: string) {
    for (let tried = 0; ; tried++) {
      const url = this.urls[this.next++ % this.urls.length];
      try {
        const response = await fetch(`${url}${path}`, {
          method,
          headers: {
            authorization: `Bearer ${this.key}`,
            ...(body === undefined ? {} : { 'content-type': 'application/json' }),
            ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}),
          },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        const text = await response.text();
        const requestId = response.headers.get('x-request-id') ?? undefined;
        return { status: response.status, body: text ? JSON.parse(text) : undefined, requestId };
      } catch (error) {
        const refused = (error as { cause?: { code?: string } }).cause?.code === 'ECONNREFUSED';
        if (!refused) return { status: 0, body: { error: { code: String(error) } }, requestId: undefined };
        if (tried > 50) throw error;
        if (tried % this.urls.length === this.urls.length - 1)
          await new Promise((resolve) => setTimeout(resolve, 200)); // every replica refused: wait
      }
    }
  }
}
