import { makeEvent } from '@svc/bus';
import { describe, expect, it } from 'vitest';
import { InvalidEventError, readEnvelope } from './event-store.ts';

const valid = makeEvent(
  'post.published',
  { partner: 'acme', workspace: 'ws_1', external_id: null },
  { post: {} },
  new Date('2030-01-02T03:04:05.678Z'),
);

describe('readEnvelope', () => {
  // Guarantee: the filter columns come from the envelope of spec 6, whatever the key order of the text.
  it('reads the filter columns of an envelope', () => {
    const reordered = JSON.stringify({
      data: valid.data,
      id: valid.id,
      type: valid.type,
      partner: 'acme',
      workspace: 'ws_1',
      created_at: valid.created_at,
      external_id: null,
    });
    expect(readEnvelope(reordered)).toEqual({
      id: valid.id,
      type: 'post.published',
      partnerSlug: 'acme',
      workspaceId: 'ws_1',
      createdAt: new Date('2030-01-02T03:04:05.678Z'),
      announcesDeletion: false,
    });
    expect(readEnvelope(JSON.stringify({ ...valid, workspace: null })).workspaceId).toBeNull();
  });

  // Guarantee: anything that is not an envelope is refused (so it is dropped, not stored half-read).
  it.each([
    ['not JSON', '{'],
    ['an array', '[]'],
    ['a bad id', JSON.stringify({ ...valid, id: 'nope' })],
    ['no type', JSON.stringify({ ...valid, type: undefined })],
    ['no partner', JSON.stringify({ ...valid, partner: '' })],
    ['a numeric workspace', JSON.stringify({ ...valid, workspace: 5 })],
    ['no external_id', JSON.stringify({ ...valid, external_id: undefined })],
    ['data not an object', JSON.stringify({ ...valid, data: 'x' })],
    ['a bad created_at', JSON.stringify({ ...valid, created_at: 'yesterday' })],
  ])('refuses %s', (_what, raw) => {
    expect(() => readEnvelope(raw)).toThrow(InvalidEventError);
  });
});
