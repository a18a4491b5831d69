// Baseline (a): a bare Fastify 5 "hello" route, the ceiling of the HTTP layer on this machine.
import Fastify from 'fastify';
import { announce, onShutdown } from './child.ts';

const app = Fastify({ logger: false });
app.get('/hello', async () => ({ hello: 'world' }));
const url = await app.listen({ port: 0, host: '127.0.0.1' });
onShutdown(() => app.close());
announce({ url, path: '/hello', processes: 'one process (Fastify)' });
