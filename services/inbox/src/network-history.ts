import type { KnownAccount } from '@svc/directory';
import type { GraphAttachment, GraphComment, GraphMessage } from '@svc/graph-client';
import { newId } from '@svc/ids';
import type { MessageRow, NewMessage } from './inbox-rows.ts';

/** A message read from the network's history (a DM or a comment), before it is stored. */
export interface HistoryRow {
  platformId: string;
  outbound: boolean;
  kind: MessageRow['kind'];
  sender: MessageRow['sender'];
  text: string | null;
  attachments: MessageRow['attachments'];
  parentPlatformId: string | null;
  at: Date;
}

/** A message read from the network's history, as the store writes it. */
export function historyMessage(
  row: HistoryRow,
  place: Pick<NewMessage, 'conversationId' | 'partnerId' | 'workspaceId' | 'accountId'>,
  storedAt: Date,
): NewMessage {
  return {
    id: newId('message'),
    ...place,
    direction: row.outbound ? 'outbound' : 'inbound',
    kind: row.kind,
    platformMessageId: row.platformId,
    sender: row.sender,
    text: row.text,
    attachments: row.attachments,
    parentPlatformId: row.parentPlatformId,
    source: row.outbound ? 'network' : null,
    state: 'sent',
    idempotencyKey: null,
    requestHash: null,
    createdAt: row.at,
    storedAt,
  };
}

/** A DM of a conversation the network lists. */
export function dmRow(account: KnownAccount, m: GraphMessage, now: Date): HistoryRow {
  return {
    platformId: m.id,
    outbound: m.from?.id === account.platformId,
    kind: 'message',
    sender: senderOf(m.from),
    text: m.message ?? null,
    attachments: attachmentsOf(m),
    parentPlatformId: null,
    at: new Date(m.created_time ?? now),
  };
}

export function commentRow(account: KnownAccount, objectId: string, c: GraphComment, now: Date): HistoryRow {
  const parent = c.parent_id ?? c.parent?.id ?? null;
  return {
    platformId: c.id,
    outbound: c.from?.id === account.platformId,
    kind: parent && parent !== objectId ? 'reply' : 'comment',
    sender: senderOf(c.from ? { ...c.from, username: c.from.username ?? c.username } : undefined),
    text: c.text ?? c.message ?? null,
    attachments: [],
    parentPlatformId: parent && parent !== objectId ? parent : null,
    at: new Date(c.timestamp ?? c.created_time ?? now),
  };
}

/** Instagram nests replies under their top-level comment; they carry no parent_id there. */
export function repliesOf(comment: GraphComment): GraphComment[] {
  return (comment.replies?.data ?? []).map((r) => ({ ...r, parent_id: comment.id }));
}

function senderOf(
  from: { id: string; name?: string | undefined; username?: string | undefined } | undefined,
) {
  return from
    ? { id: from.id, name: from.name ?? from.username ?? null, handle: from.username ?? null }
    : null;
}

/** A message's files as the network hosts them (`image_data`, `video_data` or `file_url`). */
export function attachmentsOf(message: GraphMessage): MessageRow['attachments'] {
  return (message.attachments?.data ?? []).flatMap((a: GraphAttachment) => {
    const url = a.image_data?.url ?? a.video_data?.url ?? a.file_url;
    if (!url) return [];
    const type = a.image_data ? 'image' : a.video_data ? 'video' : 'file';
    return [
      {
        type,
        url,
        ...(a.mime_type ? { mime: a.mime_type } : {}),
        ...(a.image_data?.width ? { width: a.image_data.width } : {}),
        ...(a.image_data?.height ? { height: a.image_data.height } : {}),
      },
    ];
  });
}
