import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
  at: number;
}

export type Behaviour = (request: ReceivedRequest, response: ServerResponse) => void;

/**
 * A real local webhook receiver: records every request (headers, raw body, arrival time) and
 * answers with the current behaviour (200 by default). Counts requests in flight, so tests can
 * check how many a sender runs at once.
 */
export class Receiver {
  readonly requests: ReceivedRequest[] = [];
  behaviour: Behaviour = (_request, response) => response.writeHead(200).end('ok');
  inFlight = 0;
  maxInFlight = 0;

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(path = '/hook'): Promise<Receiver> {
    let receiver: Receiver | undefined;
    const server = createServer((request, response) => receiver?.handle(request, response));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    receiver = new Receiver(server, `http://127.0.0.1:${port}${path}`);
    return receiver;
  }

  get port(): number {
    return Number(new URL(this.url).port);
  }

  /** Requests that carried this event id. */
  deliveriesOf(eventId: string): ReceivedRequest[] {
    return this.requests.filter((r) => r.headers['x-service-delivery'] === eventId);
  }

  private handle(request: IncomingMessage, response: ServerResponse): void {
    const chunks: Buffer[] = [];
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    response.once('close', () => this.inFlight--);
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const received: ReceivedRequest = {
        method: request.method ?? '',
        path: request.url ?? '',
        headers: request.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
      };
      this.requests.push(received);
      this.behaviour(received, response);
    });
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
