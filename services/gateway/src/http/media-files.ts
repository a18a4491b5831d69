import { Readable } from 'node:stream';
import type { ReadMediaFileResponse } from '@svc/contracts';
import { errors, ServiceError } from '@svc/errors';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { PublishingClient } from '../clients.ts';
import type { SharedFileReads, WholeFile } from './media-file-reads.ts';
import type { HttpMetrics, MediaFileAnswer } from './metrics.ts';

/**
 * How long one file may take to reach its fetcher: the stream from publishing holds a file open
 * and moves only as fast as the fetcher reads, so a stalled one is cut off after this.
 */
const MEDIA_FILE_DEADLINE_MS = 120_000;

interface FileHead {
  mime: string;
  size: number;
  expiresAt: string;
  offset: number;
  length: number;
}

/**
 * The bytes behind a signed media URL, for the networks to fetch (no API key: the token is the
 * credential, and a forged or expired one is a 404). Browsers are told not to sniff, and caches
 * to keep the file no longer than the URL is valid. A large file arrives from publishing in chunks
 * and is passed on as they come, with its length announced: no whole file is held here. A small
 * one fetched whole (a photo) is read in one call instead, and shared with the fetches of the same
 * URL that arrive meanwhile or within a few seconds after (see media-file-reads.ts).
 *
 * Ranges (Meta fetches video in parts): one `Range: bytes=a-b`, `a-` or `-n` answers 206 with
 * Content-Range; a range that starts past the end answers 416 with a Content-Range of the size;
 * several ranges, or a header we cannot read, get the whole file (200), as HTTP allows.
 */
export function mediaFileRoutes(publishing: PublishingClient, reads: SharedFileReads, metrics?: HttpMetrics) {
  const files: FileSources = {
    publishing,
    reads,
    answered: (how) => metrics?.mediaFileFetch(how),
  };
  return async (scope: FastifyInstance) => {
    // HEAD is its own route: Fastify's derived one would read the whole file to discard it.
    scope.get('/media-files/:token', { exposeHeadRoute: false }, (request, reply) =>
      serveFile(files, request, reply),
    );
    scope.head('/media-files/:token', (request, reply) => serveFile(files, request, reply));
  };
}

/** Where a file comes from (publishing, or a read of it already made here), and how each fetch is counted. */
interface FileSources {
  publishing: PublishingClient;
  reads: SharedFileReads;
  answered: (how: MediaFileAnswer) => void;
}

async function serveFile(
  { publishing, reads, answered }: FileSources,
  request: FastifyRequest,
  reply: FastifyReply,
) {
  const { token } = request.params as { token: string };
  if (!/^[A-Za-z0-9._-]{1,100}$/.test(token)) throw errors.notFound('media file');
  // HEAD (a fetcher checking the size first) asks for no bytes at all.
  const headOnly = request.method === 'HEAD';
  const range = headOnly ? null : parseRange(request.headers.range);
  const wholeGet = !headOnly && !range;
  if (wholeGet) {
    const kept = reads.keptFile(token);
    if (kept) {
      answered('kept');
      return sendWhole(reply, kept);
    }
    const shared = await reads.inFlight(token);
    if (shared) {
      answered('shared');
      return sendWhole(reply, shared);
    }
  }
  // Settled on every path below: the fetches waiting on this read get the file or read it themselves.
  const settle = wholeGet ? reads.start(token) : undefined;
  /** A file read whole here (its `size` bytes reserved): shared, sent, and its memory given back. */
  const sendRead = async (size: number, read: () => Promise<WholeFile>) => {
    answered('read');
    try {
      const file = await read();
      settle?.(file);
      return await sendWhole(reply, file);
    } finally {
      reads.release(size);
    }
  };
  try {
    const whole = settle ? await readWhole(publishing, reads, token) : undefined;
    if (whole) return await sendRead(whole.size, async () => whole);
    const part = headOnly ? { offset: 0n, length: 0n } : range;
    const stream = publishing.readMediaFile(
      { token, ...(part ?? {}) },
      { deadlineMs: MEDIA_FILE_DEADLINE_MS },
    );
    const messages = stream[Symbol.asyncIterator]();
    // A bad token fails here, before anything is answered: a 404 in the error envelope.
    const head = await fileHead(messages);
    if (settle && reads.reserve(head.length))
      return await sendRead(head.length, async () => ({
        ...head,
        bytes: Buffer.concat(await collect(fileBytes(messages, head.length))),
      }));
    settle?.(undefined);
    answered('streamed');
    return await streamed(reply, messages, head, { range, headOnly });
  } catch (error) {
    settle?.(undefined);
    throw error;
  }
}

/**
 * The file in one call when it is small enough to hold (what a photo is), with its memory
 * reserved until the caller releases `size`; undefined when it is not (too large, or too little
 * memory free now): the file then streams.
 */
async function readWhole(
  publishing: PublishingClient,
  reads: SharedFileReads,
  token: string,
): Promise<WholeFile | undefined> {
  const reserved = reads.reserveUpTo();
  if (reserved === 0) return undefined;
  let held = 0;
  try {
    const { head, data } = await publishing.readWholeMediaFile({ token, maxBytes: BigInt(reserved) });
    if (!head || head.size > BigInt(reserved)) return undefined;
    if (BigInt(data.byteLength) !== head.size)
      throw new ServiceError('internal_error', 'the media file did not arrive whole');
    held = data.byteLength;
    const bytes = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
    return { mime: head.mime, size: held, expiresAt: head.expiresAt, bytes };
  } finally {
    reads.release(reserved - held);
  }
}

/** The file (or the range asked) as publishing streams it: 200, 206, 416, or HEAD's headers. */
function streamed(
  reply: FastifyReply,
  messages: FileMessages,
  head: FileHead,
  { range, headOnly }: { range: ByteRangeRequest | null; headOnly: boolean },
) {
  fileHeaders(reply, head.expiresAt);
  if (headOnly) return whole(reply, messages, head);
  if (range && head.length === 0) return unsatisfiable(reply, messages, head);
  if (range)
    reply
      .code(206)
      .header('Content-Range', `bytes ${head.offset}-${head.offset + head.length - 1}/${head.size}`);
  else reply.code(200);
  return reply
    .header('Content-Type', head.mime)
    .header('Content-Length', String(head.length))
    .header('Content-Disposition', 'inline')
    .send(Readable.from(fileBytes(messages, head.length)));
}

/** A file read whole: the same answer as streamed. */
function sendWhole(reply: FastifyReply, file: WholeFile) {
  fileHeaders(reply, file.expiresAt);
  return reply
    .code(200)
    .header('Content-Type', file.mime)
    .header('Content-Length', String(file.size))
    .header('Content-Disposition', 'inline')
    .send(file.bytes);
}

/** What every answer with the file says: ranges served, not sniffed, cached no longer than the URL is valid. */
function fileHeaders(reply: FastifyReply, expiresAt: string): void {
  const remaining = Math.floor((Date.parse(expiresAt) - Date.now()) / 1000);
  const maxAge = Math.max(0, Math.min(remaining, 3600));
  reply
    .header('Accept-Ranges', 'bytes')
    .header('Cache-Control', `private, max-age=${maxAge}`)
    .header('X-Content-Type-Options', 'nosniff');
}

async function collect(chunks: AsyncIterable<Buffer>): Promise<Buffer[]> {
  const all: Buffer[] = [];
  for await (const chunk of chunks) all.push(chunk);
  return all;
}

type FileMessages = AsyncIterator<ReadMediaFileResponse>;

/** HEAD: the headers a GET of the whole file would have. */
async function whole(reply: FastifyReply, messages: FileMessages, head: FileHead) {
  await messages.return?.();
  return reply
    .code(200)
    .header('Content-Type', head.mime)
    .header('Content-Length', String(head.size))
    .header('Content-Disposition', 'inline')
    .send();
}

/** 416, with the size the range missed. */
async function unsatisfiable(reply: FastifyReply, messages: FileMessages, head: FileHead) {
  await messages.return?.();
  const error = new ServiceError(
    'validation_error',
    `the range starts past the end of the file (${head.size} bytes)`,
    { field: 'Range' },
  );
  return reply.code(416).header('Content-Range', `bytes */${head.size}`).send({ error: error.toBody() });
}

/** The stream's first message, which says what the file is and which of its bytes follow. */
async function fileHead(messages: FileMessages): Promise<FileHead> {
  const first = await messages.next();
  const part = first.done ? undefined : first.value.part;
  if (part?.case !== 'head') {
    await messages.return?.();
    throw new ServiceError('internal_error', 'the media file stream did not start with its head');
  }
  const { mime, expiresAt } = part.value;
  return {
    mime,
    expiresAt,
    size: Number(part.value.size),
    offset: Number(part.value.offset),
    length: Number(part.value.length),
  };
}

/**
 * The file's chunks as they arrive. A stream that brings more or fewer bytes than its head
 * announced fails, so the fetcher sees a broken response rather than a wrong file; a fetcher that
 * hangs up ends the stream from publishing (the iterator's return cancels the call).
 */
async function* fileBytes(messages: FileMessages, length: number): AsyncGenerator<Buffer> {
  let sent = 0;
  try {
    for (let next = await messages.next(); !next.done; next = await messages.next()) {
      const { part } = next.value;
      if (part.case !== 'chunk') continue;
      sent += part.value.byteLength;
      if (sent > length) throw new Error(`the media file has more than the ${length} bytes announced`);
      yield Buffer.from(part.value.buffer, part.value.byteOffset, part.value.byteLength);
    }
    if (sent !== length)
      throw new Error(`the media file ended after ${sent} of the ${length} bytes announced`);
  } finally {
    await messages.return?.();
  }
}

/** The part of a file a Range header asks, as ReadMediaFile takes it (a negative offset counts from the end). */
interface ByteRangeRequest {
  offset: bigint;
  length?: bigint;
}

const SINGLE_RANGE = /^bytes=(\d{0,15})-(\d{0,15})$/;

/**
 * One range of a `Range` header; null for none, for several (the whole file is answered) and for
 * one we cannot read (HTTP says to ignore it). `bytes=-0` asks nothing: an empty range, a 416.
 */
function parseRange(header: string | undefined): ByteRangeRequest | null {
  const match = SINGLE_RANGE.exec(header?.replace(/\s+/g, '') ?? '');
  if (!match) return null;
  const [, first = '', last = ''] = match;
  if (first === '' && last === '') return null;
  if (first === '') return Number(last) === 0 ? { offset: 0n, length: 0n } : { offset: -BigInt(last) };
  if (last === '') return { offset: BigInt(first) };
  if (BigInt(last) < BigInt(first)) return null;
  return { offset: BigInt(first), length: BigInt(last) - BigInt(first) + 1n };
}
