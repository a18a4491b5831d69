// The local webhook receiver of bench:webhooks: answers every POST with 200 at once, counts requests
// and distinct X-Service-Delivery ids, and reports them on GET /__stats. Runs in its own process so
// it never shares an event loop with the sender being measured.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { announce, onShutdown } from './child.ts';

let requests = 0;
const deliveries = new Set<string>();

const server = createServer((request, response) => {
  if (request.method === 'GET' && request.url === '/__stats') {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ requests, distinct: deliveries.size }));
    return;
  }
  request.resume();
  request.on('end', () => {
    requests++;
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
