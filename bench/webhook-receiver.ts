// The local webhook receiver of bench:webhooks and bench:inbox: answers every POST with 200 at once,
// counts requests and distinct X-Service-Delivery ids, and reports them on GET /__stats. For inbox
// events (`message.*`) it also keeps when each network message id first arrived and how often, on
// GET /__messages. Runs in its own process so it never shares an event loop with the sender.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { announce, onShutdown } from './child.ts';

let requests = 0;
const deliveries = new Set<string>();
/** Network message id → [first receipt (ms since epoch), receipts]. */
const messages = new Map<string, [number, number]>();

function noteMessage(body: string): void {
  const id = (JSON.parse(body) as { data?: { message?: { platform_message_id?: string } } }).data?.message
    ?.platform_message_id;
  if (!id) return;
  const seen = messages.get(id);
  messages.set(id, seen ? [seen[0], seen[1] + 1] : [Date.now(), 1]);
}

const server = createServer((request, response) => {
  if (request.method === 'GET' && request.url === '/__stats') {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ requests, distinct: deliveries.size }));
    return;
  }
  if (request.method === 'GET' && request.url === '/__messages') {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify(Object.fromEntries(messages)));
    return;
  }
  const inbox = String(request.headers['x-service-event'] ?? '').startsWith('message.');
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => {
    if (inbox) chunks.push(chunk);
  });
  request.on('end', () => {
    requests++;
    if (inbox) noteMessage(Buffer.concat(chunks).toString());
    const id = request.headers['x-service-delivery'];
    if (typeof id === 'string') deliveries.add(id);
    response.writeHead(200, { 'content-type': 'text/plain' });
    response.end('ok');
  });
});
server.keepAliveTimeout = 30_000;
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const { port } = server.address() as AddressInfo;

onShutdown(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});
announce({ url: `http://127.0.0.1:${port}`, path: '/hook', processes: 'receiver: one process' });
