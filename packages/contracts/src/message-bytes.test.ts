import { randomBytes } from 'node:crypto';
import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { describe, expect, it } from 'vitest';
import {
  AppendUploadRequestSchema,
  CreateMediaRequestSchema,
  MediaFileHeadSchema,
  ReadMediaFileResponseSchema,
} from './gen/svc/publishing/v1/publishing_pb.ts';
import { encodeMessage } from './message-bytes.ts';

// Guarantee: a message carrying a large `bytes` field (a file chunk, an upload part, an uploaded
// file) is encoded so that any protobuf reader gets exactly the message the library's own encoder
// would have given it; only the way it is built differs.

/** Lengths around the bulk threshold and across varint widths (1, 2, 3 and 4 bytes of length). */
const LENGTHS = [0, 1, 4095, 4096, 16_383, 16_384, 65_536, 2_097_152, 2_500_000];

describe('encodeMessage', () => {
  it('writes a lone bytes field byte for byte as the library does', () => {
    for (const length of LENGTHS) {
      const chunk = randomBytes(length);
      const message = create(ReadMediaFileResponseSchema, { part: { case: 'chunk', value: chunk } });
      const ours = Buffer.from(encodeMessage(ReadMediaFileResponseSchema, message));
      expect(ours.equals(toBinary(ReadMediaFileResponseSchema, message)), `${length} bytes`).toBe(true);
    }
  });

  it('reads back an upload part with its other fields as the library encodes it', () => {
    for (const length of LENGTHS) {
      const init = {
        caller: { partnerId: 'partner_1', workspaceId: 'ws_1' },
        uploadId: 'up_1',
        offset: 123_456_789n,
        chunk: randomBytes(length),
        last: true,
      };
      const ours = fromBinary(AppendUploadRequestSchema, encodeMessage(AppendUploadRequestSchema, init));
      const theirs = fromBinary(
        AppendUploadRequestSchema,
        toBinary(AppendUploadRequestSchema, create(AppendUploadRequestSchema, init)),
      );
      expect(Buffer.from(ours.chunk).equals(init.chunk), `${length} bytes`).toBe(true);
      expect(Buffer.from(theirs.chunk).equals(init.chunk)).toBe(true);
      expect({ ...ours, chunk: [] }).toEqual({ ...theirs, chunk: [] });
    }
  });

  it('reads back an uploaded file, and the head of a file stream, unchanged', () => {
    const data = randomBytes(300_000);
    const media = { workspaceId: 'ws_1', data, url: '' };
    const read = fromBinary(CreateMediaRequestSchema, encodeMessage(CreateMediaRequestSchema, media));
    expect(read.workspaceId).toBe('ws_1');
    expect(Buffer.from(read.data).equals(data)).toBe(true);

    const head = {
      mime: 'image/jpeg',
      size: 10n,
      expiresAt: '2026-12-06T00:00:00.000Z',
      offset: 0n,
      length: 10n,
    };
    const encoded = encodeMessage(ReadMediaFileResponseSchema, { part: { case: 'head', value: head } });
    expect(fromBinary(ReadMediaFileResponseSchema, encoded).part).toEqual({
      case: 'head',
      value: create(MediaFileHeadSchema, head),
    });
  });

  it('leaves the message it was given as it was', () => {
    const chunk = randomBytes(10_000);
    const message = create(ReadMediaFileResponseSchema, { part: { case: 'chunk', value: chunk } });
    encodeMessage(ReadMediaFileResponseSchema, message);
    expect(message.part.case).toBe('chunk');
    expect(message.part.value).toBe(chunk);
  });
});
