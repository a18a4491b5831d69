import { Readable } from 'node:stream';
import type { ReadMediaFileResponse } from '@svc/contracts';
import { errors, ServiceError } from '@svc/errors';
import type { FastifyInstance } from 'fastify';
import type { PublishingClient } from '../clients.ts';

/**
 * How long one file may take to reach its fetcher: the stream from publishing holds a file open
 * and moves only as fast as the fetcher reads, so a stalled one is cut off after this.
 */
const MEDIA_FILE_DEADLINE_MS = 120_000;

/**
 * The bytes behind a signed media URL, for the networks to fetch (no API key: the token is the
 * credential, and a forged or expired one is a 404). Browsers are told not to sniff, and caches
 * to keep the file no longer than the URL is valid. The file arrives from publishing in chunks
 * and is passed on as they come, with its length announced: no whole file is held here.
 */
export function mediaFileRoutes(publishing: PublishingClient) {
  return async (scope: FastifyInstance) => {
    scope.get('/media-files/:token', async (request, reply) => {
      const { token } = request.params as { token: string };
      if (!/^[A-Za-z0-9._-]{1,100}$/.test(token)) throw errors.notFound('media file');
      const stream = publishing.readMediaFile({ token }, { deadlineMs: MEDIA_FILE_DEADLINE_MS });
      const messages = stream[Symbol.asyncIterator]();
      // A bad token fails here, before anything is answered: a 404 in the error envelope.
      const head = await fileHead(messages);
      const remaining = Math.floor((Date.parse(head.expiresAt) - Date.now()) / 1000);
      const maxAge = Math.max(0, Math.min(remaining, 3600));
      return reply
        .code(200)
        .header('Content-Type', head.mime)
        .header('Content-Length', String(head.size))
        .header('Cache-Control', `private, max-age=${maxAge}`)
        .header('X-Content-Type-Options', 'nosniff')
        .header('Content-Disposition', 'inline')
        .send(Readable.from(fileBytes(messages, head.size)));
    });
  };
}

type FileMessages = AsyncIterator<ReadMediaFileResponse>;

/** The stream's first message, which says what the file is. */
async function fileHead(messages: FileMessages): Promise<{ mime: string; size: number; expiresAt: string }> {
  const first = await messages.next();
  const part = first.done ? undefined : first.value.part;
  if (part?.case !== 'head') {
    await messages.return?.();
    throw new ServiceError('internal_error', 'the media file stream did not start with its head');
  }
  return { ...part.value, size: Number(part.value.size) };
}

/**
 * The file's chunks as they arrive. A stream that brings more or fewer bytes than its head
 * announced fails, so the fetcher sees a broken response rather than a wrong file; a fetcher that
 * hangs up ends the stream from publishing (the iterator's return cancels the call).
 */
async function* fileBytes(messages: FileMessages, size: number): AsyncGenerator<Buffer> {
  let sent = 0;
  try {
    for (let next = await messages.next(); !next.done; next = await messages.next()) {
      const { part } = next.value;
      if (part.case !== 'chunk') continue;
      sent += part.value.byteLength;
      if (sent > size) throw new Error(`the media file has more than the ${size} bytes announced`);
      yield Buffer.from(part.value.buffer, part.value.byteOffset, part.value.byteLength);
    }
    if (sent !== size) throw new Error(`the media file ended after ${sent} of the ${size} bytes announced`);
  } finally {
    await messages.return?.();
  }
}
