import type { AddressInfo } from 'node:net';
import { createServer, type Server, type Socket } from 'node:net';
import { eventually } from '@svc/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_RESPONSE_BYTES } from '../src/delivery/transport.ts';
import { startWebhooksStack, type WebhooksStack } from './harness.ts';

const DEADLINE_MS = 1_500;
let stack: WebhooksStack;

beforeAll(async () => {
  stack = await startWebhooksStack({ WEBHOOK_TIMEOUT_MS: String(DEADLINE_MS) });
});
afterAll(() => stack.stop());

/**
 * A raw TCP "receiver" that misbehaves at the byte level. It answers each request with `answer`
 * and records, per connection, how many bytes it managed to write and when the sender hung up.
 */
async function hostileReceiver(answer: (socket: Socket, written: { bytes: number }) => void) {
  const connections: { bytes: number; openedAt: number; closedAt?: number }[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const server: Server = createServer((socket) => {
    const record: { bytes: number; openedAt: number; closedAt?: number } = { bytes: 0, openedAt: Date.now() };
    connections.push(record);
    socket.on('error', () => {});
    socket.once('close', () => {
      record.closedAt = Date.now();
    });
    let answered = false;
    socket.on('data', (chunk) => {
      // Answer once the request's end (the last byte of its body) has arrived.
      if (!answered && chunk.toString('latin1').includes('}')) {
        answered = true;
        answer(socket, record);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const partner = await stack.partnerWithWebhook(`http://127.0.0.1:${port}/hook`);
  return {
    connections,
    every(ms: number, fn: () => boolean) {
      const timer = setInterval(() => {
        if (!fn()) clearInterval(timer);
      }, ms);
      timers.add(timer);
    },
    ping: () => stack.client.testWebhook({ partnerId: partner.id, partnerSlug: partner.slug }),
    async close() {
      for (const timer of timers) clearInterval(timer);
      server.close();
    },
  };
}

/** Writes `text` one byte a second, as long as the socket is open. */
function drip(socket: Socket, text: string, every: (ms: number, fn: () => boolean) => void) {
  let index = 0;
  every(1_000, () => {
    if (socket.destroyed || index >= text.length) return false;
    socket.write(text.charAt(index++));
    return true;
  });
}

describe('adversarial receivers', () => {
  // Guarantee: headers dripped one byte a second are cut at the one hard deadline.
  it('cuts a receiver that drips its headers at the deadline', async () => {
    const receiver = await hostileReceiver((socket) =>
      drip(socket, 'HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n', receiver.every),
    );
    try {
      const { attempt } = await receiver.ping();
      expect(attempt).toMatchObject({ succeeded: false, error: `timed out after ${DEADLINE_MS} ms` });
      expect(attempt?.latencyMs).toBeGreaterThanOrEqual(DEADLINE_MS - 10);
      expect(attempt?.latencyMs).toBeLessThan(DEADLINE_MS + 500);
      const [connection] = await eventually(() =>
        receiver.connections[0]?.closedAt ? receiver.connections : undefined,
      );
      expect((connection?.closedAt ?? 0) - (connection?.openedAt ?? 0)).toBeLessThan(DEADLINE_MS + 500);
    } finally {
      await receiver.close();
    }
  });

  // Guarantee: a body dripped one byte a second is cut at the deadline too; the 2xx status decides.
  it('cuts a receiver that drips its body at the deadline', async () => {
    const receiver = await hostileReceiver((socket) => {
      socket.write('HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n');
      drip(socket, 'x'.repeat(1000), receiver.every);
    });
    try {
      const { attempt } = await receiver.ping();
      expect(attempt).toMatchObject({ succeeded: true, statusCode: 200 });
      expect(attempt?.latencyMs).toBeGreaterThanOrEqual(DEADLINE_MS - 10);
      expect(attempt?.latencyMs).toBeLessThan(DEADLINE_MS + 500);
      await eventually(() => (receiver.connections[0]?.closedAt ? true : undefined));
    } finally {
      await receiver.close();
    }
  });

  // Guarantee: of an endless body we read a few KiB and hang up: a receiver writing at a steady pace
  // (so kernel buffers never fill) gets to write barely more than we read.
  it('reads no further than a few KiB of an endless body', async () => {
    const receiver = await hostileReceiver((socket, written) => {
      socket.write('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n');
      const chunk = `400\r\n${'y'.repeat(1024)}\r\n`;
      receiver.every(5, () => {
        if (socket.destroyed) return false;
        socket.write(chunk);
        written.bytes += 1024;
        return true;
      });
    });
    try {
      const { attempt } = await receiver.ping();
      expect(attempt).toMatchObject({ succeeded: true, statusCode: 200 });
      expect(attempt?.latencyMs).toBeLessThan(DEADLINE_MS / 2);
      const [connection] = await eventually(() =>
        receiver.connections[0]?.closedAt ? receiver.connections : undefined,
      );
      expect(connection?.bytes).toBeGreaterThanOrEqual(MAX_RESPONSE_BYTES);
      expect(connection?.bytes).toBeLessThanOrEqual(MAX_RESPONSE_BYTES + 8 * 1024);
    } finally {
      await receiver.close();
    }
  });

  // Guarantee: huge bodies sent as fast as possible, many at once, neither stall the attempt nor grow
  // memory: each is read up to the cap and the connection dropped.
  it('keeps memory bounded against many huge bodies at once', async () => {
    const receiver = await hostileReceiver((socket) => {
      socket.write('HTTP/1.1 200 OK\r\nContent-Length: 10000000000\r\n\r\n');
      const block = Buffer.alloc(64 * 1024, 'z');
      const pump = () => {
        while (!socket.destroyed && socket.write(block)) {}
      };
      socket.on('drain', pump);
      pump();
    });
    try {
      const before = process.memoryUsage().rss;
      const attempts = await Promise.all(Array.from({ length: 40 }, () => receiver.ping()));
      for (const { attempt } of attempts) {
        expect(attempt).toMatchObject({ succeeded: true, statusCode: 200 });
        expect(attempt?.latencyMs).toBeLessThan(DEADLINE_MS);
      }
      expect(process.memoryUsage().rss - before).toBeLessThan(100 * 1024 * 1024);
      await eventually(() => (receiver.connections.every((c) => c.closedAt) ? true : undefined));
    } finally {
      await receiver.close();
    }
  });
});
