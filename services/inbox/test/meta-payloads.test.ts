import { replayDeadLetter } from '@svc/bus';
import type { ConversationView, MessageView } from '@svc/contracts/public';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fill } from './fixtures/fill.ts';
import * as ig from './fixtures/meta-instagram.ts';
import * as messenger from './fixtures/meta-messenger.ts';
import * as feed from './fixtures/meta-page-feed.ts';
import { type Connected, connectedWorkspace, type InboxHarness } from './harness.ts';
import {
  deadLetterReader,
  deliver,
  dmThread,
  eventsAbout,
  eventually,
  findThread,
  messageIn,
  personId,
  startBusyInbox,
  uniqueMid,
} from './meta-deliveries.ts';

/**
 * Every kind of Meta webhook the inbox meets, fed as Meta documents it (fixtures/, placeholders
 * filled) to the real gateway (`POST /webhooks/meta`, signed), through NATS and the services, and
 * checked where a partner sees it: REST (`/v1/conversations`, their messages) and `GET /v1/events`.
 * Every delivery must be answered 200 at once, and none may end up a dead letter except the one
 * body that cannot be read.
 */
let h: InboxHarness;
let w: Connected;
let letters: Awaited<ReturnType<typeof deadLetterReader>>;

beforeAll(async () => {
  h = await startBusyInbox();
  w = await connectedWorkspace(h, 'Payloads');
  letters = await deadLetterReader(h);
}, 120_000);
afterAll(async () => {
  await letters?.close();
  await h?.stop();
});

/** Delivers a documented payload with its placeholders filled; Meta must get a quick 200. */
async function send(payload: unknown, values: Record<string, string | number> = {}) {
  const answer = await deliver(h, fill(payload, values));
  expect(answer.status).toBe(200);
  expect(answer.ms).toBeLessThan(1_000);
}

/** A Messenger person's ids for the fixtures. */
const onPage = (psid: string, extra: Record<string, string | number> = {}) => ({
  '<PAGE_ID>': w.page.platform_id,
  '682498302938465': w.page.platform_id,
  '<PSID>': psid,
  '<USER_ID>': psid,
  ...extra,
});
/** An Instagram person's ids for the fixtures. */
const onInstagram = (igsid: string, extra: Record<string, string | number> = {}) => ({
  '<YOUR_APP_USERS_INSTAGRAM_ACCOUNT_ID>': w.ig.platform_id,
  '<IGSID>': igsid,
  ...extra,
});

const withContact = (id: string) => (c: ConversationView) => c.contact?.id === id;

/** A Messenger text message from the person, stored; answers it as REST shows it. */
async function messengerText(psid: string, mid: string): Promise<MessageView> {
  await send(messenger.TEXT_MESSAGE, onPage(psid, { 'mid.1457764197618:41d102a3e1ae206a38': mid }));
  return (await messageIn(h, w.page.id, withContact(psid), mid)).message;
}

async function instagramText(igsid: string, mid: string, text = 'hi'): Promise<MessageView> {
  await send(ig.instagramBody(ig.TEXT), onInstagram(igsid, { '<MESSAGE_ID>': mid, '<MESSAGE_TEXT>': text }));
  return (await messageIn(h, w.ig.id, withContact(igsid), mid)).message;
}

describe('attachments of every documented type', () => {
  // Guarantee: a Messenger attachment of each documented type becomes a message with its type and URL.
  it.each(['image', 'video', 'audio', 'file', 'reel', 'ig_reel', 'sticker', 'post', 'ig_post'])(
    'keeps a Messenger %s attachment',
    async (type) => {
      const psid = personId('70');
      const mid = uniqueMid(type);
      const url = `https://lookaside.fbsbx.com/${type}.bin`;
      const body = { object: 'page', entry: [messenger.ATTACHMENT_MESSAGE] };
      await send(
        body,
        onPage(psid, { '<TYPE>': type, '<ATTACHMENT_URL>': url, 'mid.$cAAJdkrCd2ORnva8ErFhjGm0X_Q_c': mid }),
      );
      const { message } = await messageIn(h, w.page.id, withContact(psid), mid);
      expect(message).toMatchObject({ direction: 'inbound', kind: 'message', text: null });
      expect(message.attachments).toEqual([{ type, url }]);
    },
  );

  // Guarantee: an Instagram attachment of each documented type becomes a message with its type and URL.
  it.each([
    'image',
    'video',
    'audio',
    'file',
    'share',
    'story_mention',
    'ig_reel',
    'reel',
    'ig_post',
    'unsupported_type',
  ])('keeps an Instagram %s attachment', async (type) => {
    const igsid = personId('61');
    const mid = uniqueMid(type);
    const url = `https://lookaside.fbsbx.com/ig_messaging_cdn/?asset_id=${mid}`;
    await send(
      ig.instagramBody(ig.ATTACHMENT),
      onInstagram(igsid, { '<TYPE>': type, '<URL>': url, '<MESSAGE_ID>': mid }),
    );
    const { message } = await messageIn(h, w.ig.id, withContact(igsid), mid);
    expect(message.attachments).toEqual([{ type, url }]);
  });

  // Guarantee: a shared Instagram post keeps both attachments Meta sends, with their titles.
  it('keeps a shared post as share and ig_post, with the caption as title', async () => {
    const igsid = personId('61');
    const mid = uniqueMid('share');
    await send(ig.instagramBody(ig.POST_SHARE), onInstagram(igsid, { '<MESSAGE_ID>': mid }));
    const { message } = await messageIn(h, w.ig.id, withContact(igsid), mid);
    const title =
      'Build a workspace that attracts talent and supports your team with solutions made for growing businesses.';
    const url = 'https://lookaside.fbsbx.com/ig_messaging_cdn/?asset_id=18139494541428835={SIGNATURE}';
    expect(message.attachments).toEqual([
      { type: 'share', url, title },
      { type: 'ig_post', url, title },
    ]);
  });

  // Guarantee: a link shared on Messenger (`fallback`, `"payload": null`) is a message with its link, not lost.
  it('keeps a fallback attachment whose payload is null', async () => {
    const psid = personId('70');
    const mid = uniqueMid('fallback');
    const link = 'https://example.com/menu';
    await send(
      messenger.FALLBACK_MESSAGE,
      onPage(psid, {
        'mid.1458696618141:b4ef9d19ec21086067': mid,
        '<URL_SENT_BY_THE_USER>': link,
        '<TITLE_OF_THE_URL_ATTACHMENT>': 'Our menu',
        '<URL_OF_THE_ATTACHMENT>': link,
      }),
    );
    const { thread, message } = await messageIn(h, w.page.id, withContact(psid), mid);
    expect(message.text).toBe(link);
    expect(message.attachments).toEqual([{ type: 'fallback', url: link, title: 'Our menu' }]);
    const received = await eventsAbout(h, w.workspace, 'message.received', message.id, 1);
    expect(received).toHaveLength(1);
    expect(received[0]?.data.conversation.id).toBe(thread.conversation.id);
  });

  // Guarantee: an attachment without any payload keeps the message and the attachment's type.
  it('keeps a fallback attachment without a payload', async () => {
    const psid = personId('70');
    const mid = uniqueMid('bare');
    await send(
      messenger.FALLBACK_WITHOUT_PAYLOAD,
      onPage(psid, { 'mid.1458696618141:b4ef9d19ec21086068': mid }),
    );
    const { message } = await messageIn(h, w.page.id, withContact(psid), mid);
    expect(message.attachments).toEqual([{ type: 'fallback', url: null }]);
  });

  // Guarantee: an attachment type Meta adds later is kept as it came, not dropped.
  it('keeps an attachment of a type nobody documented yet', async () => {
    const igsid = personId('61');
    const mid = uniqueMid('new');
    const url = 'https://lookaside.fbsbx.com/hologram';
    await send(
      ig.instagramBody(ig.ATTACHMENT),
      onInstagram(igsid, { '<TYPE>': 'hologram', '<URL>': url, '<MESSAGE_ID>': mid }),
    );
    const { message } = await messageIn(h, w.ig.id, withContact(igsid), mid);
    expect(message.attachments).toEqual([{ type: 'hologram', url }]);
  });
});

describe('replies and unsupported messages', () => {
  // Guarantee: a Messenger reply (`reply_to.mid`) names the message it answers as `parent`.
  it('links a Messenger reply to the message it answers', async () => {
    const psid = personId('70');
    const [first, reply] = [uniqueMid('first'), uniqueMid('reply')];
    const original = await messengerText(psid, first);
    await send(
      messenger.REPLY_MESSAGE,
      onPage(psid, {
        'm_1fTq8oLumEyIp3Q2MR-aY7IfLZDamVrALniheU': first,
        'm_1457764197618:41d102a3e1ae206a38': reply,
      }),
    );
    const { message } = await messageIn(h, w.page.id, withContact(psid), reply);
    expect(message.parent).toBe(original.id);
  });

  // Guarantee: an Instagram reply (`reply_to.mid`) names the message it answers as `parent`.
  it('links an Instagram reply to the message it answers', async () => {
    const igsid = personId('61');
    const [first, reply] = [uniqueMid('first'), uniqueMid('reply')];
    const original = await instagramText(igsid, first);
    await send(
      ig.instagramBody(ig.MESSAGE_REPLY),
      onInstagram(igsid, {
        '<MESSAGE_ID>': reply,
        '<MESSAGE_TEXT>': 'this one',
        '<REPLIED_TO_MESSAGE_ID>': first,
      }),
    );
    const { message } = await messageIn(h, w.ig.id, withContact(igsid), reply);
    expect(message.parent).toBe(original.id);
  });

  // Guarantee: a story reply keeps the story it answers.
  it('keeps the story a story reply answers', async () => {
    const igsid = personId('61');
    const mid = uniqueMid('story');
    const url = 'https://lookaside.fbsbx.com/ig_messaging_cdn/?asset_id=17900000000000001';
    await send(
      ig.instagramBody(ig.STORY_REPLY),
      onInstagram(igsid, {
        '<MESSAGE_ID>': mid,
        '<MESSAGE_TEXT>': 'Love it',
        '<CDN_URL_FOR_THE_STORY>': url,
        '<STORY_ID>': '17900000000000001',
      }),
    );
    const { message } = await messageIn(h, w.ig.id, withContact(igsid), mid);
    expect(message).toMatchObject({ text: 'Love it', story: { id: '17900000000000001', url }, parent: null });
  });

  // Guarantee: an `is_unsupported` message says so instead of being a blank message.
  it('records an unsupported message as unsupported', async () => {
    const igsid = personId('61');
    const mid = uniqueMid('unsupported');
    await send(ig.instagramBody(ig.UNSUPPORTED), onInstagram(igsid, { '<MESSAGE_ID>': mid }));
    const { message } = await messageIn(h, w.ig.id, withContact(igsid), mid);
    expect(message).toMatchObject({ unsupported: true, text: null, attachments: [] });
  });
});

describe('changes to stored messages', () => {
  // Guarantee: an unsend (`is_deleted`) removes the text, marks the message deleted and emits message.updated once.
  it('marks an unsent Instagram message deleted, once', async () => {
    const igsid = personId('61');
    const mid = uniqueMid('unsent');
    const original = await instagramText(igsid, mid, 'oops, wrong chat');
    const values = onInstagram(igsid, { '<MESSAGE_ID>': mid });
    await send(ig.instagramBody(ig.DELETED), values);
    const { thread, message } = await messageIn(
      h,
      w.ig.id,
      withContact(igsid),
      mid,
      (m) => m.deleted_at !== null,
    );
    expect(message).toMatchObject({ id: original.id, text: null, attachments: [] });
    expect(thread.messages).toHaveLength(1);
    await send(ig.instagramBody(ig.DELETED), values);
    const updated = await eventsAbout(h, w.workspace, 'message.updated', original.id, 1);
    expect(updated).toHaveLength(1);
    expect(updated[0]?.data.message).toEqual(message);
  });

  // Guarantee: a Messenger edit replaces the text, sets edited_at and emits message.updated; no new message.
  it('applies a Messenger edit to the stored message', async () => {
    const psid = personId('70');
    const mid = uniqueMid('edit');
    const original = await messengerText(psid, mid);
    await send(
      messenger.pageBody(messenger.MESSAGE_EDIT),
      onPage(psid, { '<MESSAGE_ID>': mid, '<TEXT>': 'hello, world?', '<INT>': 1 }),
    );
    const { thread, message } = await messageIn(
      h,
      w.page.id,
      withContact(psid),
      mid,
      (m) => m.edited_at !== null,
    );
    expect(message).toMatchObject({
      id: original.id,
      text: 'hello, world?',
      edited_at: '2016-03-22T17:47:36.463Z',
    });
    expect(thread.messages).toHaveLength(1);
    const updated = await eventsAbout(h, w.workspace, 'message.updated', original.id, 1);
    expect(updated.map((e) => e.data.message.text)).toEqual(['hello, world?']);
  });

  // Guarantee: Messenger reactions are recorded on the message (one per person) and taken back; no message is created.
  it('records a Messenger reaction and its removal on the message', async () => {
    const psid = personId('70');
    const mid = uniqueMid('react');
    const original = await messengerText(psid, mid);
    const react = {
      '<MID_OF_ReactedTo_Message>': mid,
      '<REACTION>': 'love',
      '<EMOJI>': '\u2764\ufe0f',
      '<ACTION>': 'react',
    };
    await send(messenger.pageBody(messenger.MESSAGE_REACTION), onPage(psid, react));
    const reacted = await messageIn(h, w.page.id, withContact(psid), mid, (m) => m.reactions.length > 0);
    expect(reacted.message.reactions).toEqual([{ from: psid, reaction: 'love', emoji: '\u2764\ufe0f' }]);
    expect(reacted.thread.messages).toHaveLength(1);
    await send(
      messenger.pageBody(messenger.MESSAGE_REACTION),
      onPage(psid, { ...react, '<ACTION>': 'unreact' }),
    );
    await messageIn(h, w.page.id, withContact(psid), mid, (m) => m.reactions.length === 0);
    const updated = await eventsAbout(h, w.workspace, 'message.updated', original.id, 2);
    expect(updated.map((e) => e.data.message.reactions.length)).toEqual([1, 0]);
  });

  // Guarantee: Instagram reactions are recorded on the message, once each, and taken back.
  it('records an Instagram reaction and its removal on the message', async () => {
    const igsid = personId('61');
    const mid = uniqueMid('react');
    const original = await instagramText(igsid, mid);
    const values = onInstagram(igsid, { '<MESSAGE_ID>': mid });
    await send(ig.instagramBody(ig.REACTION), values);
    await send(ig.instagramBody(ig.REACTION), values);
    const reacted = await messageIn(h, w.ig.id, withContact(igsid), mid, (m) => m.reactions.length > 0);
    expect(reacted.message.reactions).toEqual([{ from: igsid, reaction: 'love', emoji: '\u2764\ufe0f' }]);
    await send(ig.instagramBody(ig.UNREACTION), values);
    await messageIn(h, w.ig.id, withContact(igsid), mid, (m) => m.reactions.length === 0);
    const updated = await eventsAbout(h, w.workspace, 'message.updated', original.id, 2);
    expect(updated).toHaveLength(2);
  });

  // Guarantee: a Messenger read receipt sets read_by_contact_at to its watermark; no message is created.
  it('records a Messenger read receipt on the conversation', async () => {
    const psid = personId('70');
    await messengerText(psid, uniqueMid('read'));
    await send(messenger.pageBody(messenger.MESSAGE_READ), onPage(psid));
    const thread = await eventuallyThread(w.page.id, psid, (c) => c.read_by_contact_at !== null);
    expect(thread.conversation.read_by_contact_at).toBe(new Date(1458668856253).toISOString());
    expect(thread.messages).toHaveLength(1);
  });

  // Guarantee: an Instagram read receipt (`messaging_seen`) sets read_by_contact_at to the message's time.
  it('records an Instagram read receipt on the conversation', async () => {
    const igsid = personId('61');
    const mid = uniqueMid('seen');
    const seen = await instagramText(igsid, mid);
    await send(ig.instagramBody(ig.SEEN), onInstagram(igsid, { '<MESSAGE_ID>': mid }));
    const thread = await eventuallyThread(w.ig.id, igsid, (c) => c.read_by_contact_at !== null);
    expect(thread.conversation.read_by_contact_at).toBe(seen.created_at);
  });
});

describe('events acknowledged and left alone', () => {
  // Guarantee: deliveries, postbacks, standby and handover events create nothing and dead-letter nothing.
  it.each([
    ['a Messenger delivery', () => messenger.pageBody(messenger.MESSAGE_DELIVERY)],
    ['a Messenger postback', () => messenger.pageBody(messenger.POSTBACK)],
    ['Messenger handover events', () => messenger.pageBody(...messenger.HANDOVER)],
    ['a Messenger standby message', () => messenger.STANDBY],
  ])('creates nothing for %s', async (_name, body) => {
    const psid = personId('70');
    await messengerText(psid, uniqueMid('before'));
    await send(body(), onPage(psid));
    await settled();
    expect((await dmThread(h, w.page.id, psid)).messages).toHaveLength(1);
  });

  // Guarantee: an Instagram postback creates nothing.
  it('creates nothing for an Instagram postback', async () => {
    const igsid = personId('61');
    await send(ig.instagramBody(ig.POSTBACK), onInstagram(igsid, { '<MESSAGE_ID>': uniqueMid('postback') }));
    await settled();
    expect(await findThread(h, w.ig.id, withContact(igsid))).toBeUndefined();
  });

  // Guarantee: an entry for a Page or an Instagram account nobody connected is acknowledged and left.
  it.each([
    ['Page', () => messenger.TEXT_MESSAGE, { '<PAGE_ID>': '104857600999999' }],
    [
      'Instagram account',
      () => ig.instagramBody(ig.TEXT),
      { '<YOUR_APP_USERS_INSTAGRAM_ACCOUNT_ID>': '17841400999999999' },
    ],
  ] as const)('ignores a message for a %s nobody connected', async (_name, body, values) => {
    const person = personId('70');
    await send(body(), {
      '<PSID>': person,
      '<IGSID>': person,
      '<MESSAGE_ID>': uniqueMid('stranger'),
      ...values,
    });
    await settled();
    const all = await h.call('GET', '/v1/conversations?limit=200');
    expect((all.body.data as ConversationView[]).some((c) => c.contact?.id === person)).toBe(false);
  });
});

describe('Page feed and Instagram comments', () => {
  const postId = () => `${w.page.platform_id}_1221${Math.floor(Math.random() * 1e14)}`;
  const commentValues = (post: string, comment: string, extra: Record<string, string> = {}) => ({
    '<PAGE_ID>': w.page.platform_id,
    '<POST_ID>': post,
    '<COMMENT_ID>': comment,
    '<USER_ID>': '7788990011223344',
    '<USER_NAME>': 'Jane Doe',
    ...extra,
  });
  const onPost = (post: string) => (c: ConversationView) => c.object?.id === post;

  // Guarantee: a Page comment edited, hidden, shown and removed updates the stored comment, each with message.updated.
  it('applies edited, hide, unhide and remove to the stored comment', async () => {
    const post = postId();
    const comment = `${post.split('_')[1]}_9988${Math.floor(Math.random() * 1e10)}`;
    await send(feed.COMMENT_ADD, commentValues(post, comment, { '<MESSAGE>': 'Do you ship to Ireland?' }));
    const added = await messageIn(h, w.page.id, onPost(post), comment);
    await send(
      feed.COMMENT_EDITED,
      commentValues(post, comment, { '<MESSAGE>': 'Do you ship to Northern Ireland?' }),
    );
    await messageIn(
      h,
      w.page.id,
      onPost(post),
      comment,
      (m) => m.text === 'Do you ship to Northern Ireland?',
    );
    await send(feed.COMMENT_HIDE, commentValues(post, comment));
    await messageIn(h, w.page.id, onPost(post), comment, (m) => m.hidden);
    await send(feed.COMMENT_UNHIDE, commentValues(post, comment));
    await messageIn(h, w.page.id, onPost(post), comment, (m) => !m.hidden);
    await send(feed.COMMENT_REMOVE, commentValues(post, comment));
    const removed = await messageIn(h, w.page.id, onPost(post), comment, (m) => m.deleted_at !== null);
    expect(removed.message).toMatchObject({ id: added.message.id, text: null, kind: 'comment' });
    expect(removed.thread.messages).toHaveLength(1);
    const updated = await eventsAbout(h, w.workspace, 'message.updated', added.message.id, 4);
    expect(
      updated.map((e) => [e.data.message.text, e.data.message.hidden, e.data.message.deleted_at !== null]),
    ).toEqual([
      ['Do you ship to Northern Ireland?', false, false],
      ['Do you ship to Northern Ireland?', true, false],
      ['Do you ship to Northern Ireland?', false, false],
      [null, false, true],
    ]);
  });

  // Guarantee: a reaction on a Page post and a status posted by the Page create nothing.
  it('creates nothing for a post reaction or a status post', async () => {
    const post = postId();
    await send(feed.POST_REACTION, commentValues(post, 'none'));
    await send(feed.STATUS_POST, { '<PAGE_ID>': w.page.platform_id });
    await settled();
    expect(await findThread(h, w.page.id, onPost(post))).toBeUndefined();
    expect(await findThread(h, w.page.id, onPost('44444444_444444444'))).toBeUndefined();
  });

  // Guarantee: the documented Instagram comment payload becomes a comment with comment.received.
  it('records the documented Instagram comment', async () => {
    const media = `1790${Math.floor(Math.random() * 1e13)}`;
    const comment = `1785${Math.floor(Math.random() * 1e13)}`;
    await send(ig.COMMENT, {
      '<YOUR_APP_USERS_INSTAGRAM_ACCOUNT_ID>': w.ig.platform_id,
      '<COMMENT_ID>': comment,
      '<INSTAGRAM_SCOPED_USER_ID>': personId('61'),
      '<USERNAME>': 'jane.doe',
      '<COMMENT_TEXT>': 'Is this gluten free?',
      '<MEDIA_ID>': media,
      '<MEDIA_PRODUCT_TYPE>': 'FEED',
    });
    const { message } = await messageIn(h, w.ig.id, (c) => c.object?.id === media, comment);
    expect(message).toMatchObject({
      kind: 'comment',
      text: 'Is this gluten free?',
      from: { handle: 'jane.doe' },
    });
    expect(await eventsAbout(h, w.workspace, 'comment.received', message.id, 1)).toHaveLength(1);
  });
});

describe('bodies the intake cannot read', () => {
  // Guarantee: a signed body that is not JSON becomes a dead letter (listed, replayable), never a silent drop.
  it('dead-letters a body that is not JSON, and a replay brings it back', async () => {
    const before = (await letters.list()).length;
    // Every kind delivered above was read: none of them is a dead letter.
    expect(before).toBe(0);
    await send('{"object":"page","entry":[{"id":"1"');
    const letter = await eventuallyLetter(before + 1);
    expect(letter.reason).toContain('the body is not JSON');
    expect(letter.subject).toBe('provider.meta.webhook');
    await replayDeadLetter(letters.bus, letter.id);
    const again = await eventuallyLetter(before + 1, (l) => l.id !== letter.id);
    expect(again.reason).toBe(letter.reason);
  });

  // Guarantee: the readable part of a body is recorded once even when another part is dead-lettered and replayed.
  it('records what it can read and dead-letters the rest', async () => {
    const psid = personId('70');
    const mid = uniqueMid('partly');
    const readable = fill(
      messenger.TEXT_MESSAGE.entry[0]?.messaging[0],
      onPage(psid, { 'mid.1457764197618:41d102a3e1ae206a38': mid }),
    );
    const broken = {
      recipient: { id: w.page.platform_id },
      timestamp: 1458692752478,
      message: { mid: uniqueMid('x') },
    };
    const before = (await letters.list()).length;
    await send(messenger.pageBody(readable, broken), onPage(psid));
    const letter = await eventuallyLetter(before + 1);
    expect(letter.reason).toContain('entry[0].messaging[1]: sender');
    await replayDeadLetter(letters.bus, letter.id);
    await eventuallyLetter(before + 1, (l) => l.id !== letter.id);
    const thread = await dmThread(h, w.page.id, psid);
    expect(thread.messages.map((m) => m.platform_message_id)).toEqual([mid]);
    const received = await eventsAbout(h, w.workspace, 'message.received', thread.messages[0]?.id ?? '', 1);
    expect(received).toHaveLength(1);
  });
});

/** Lets the intake finish what was delivered (it answers nothing back to wait on). */
const settled = () => new Promise((resolve) => setTimeout(resolve, 700));

async function eventuallyThread(account: string, contact: string, check: (c: ConversationView) => boolean) {
  return eventually(async () => {
    const thread = await findThread(h, account, withContact(contact));
    return thread && check(thread.conversation) ? thread : undefined;
  });
}

/** The dead letters once there are `count`, and the newest one that matches. */
async function eventuallyLetter(count: number, match: (l: { id: number }) => boolean = () => true) {
  return eventually(async () => {
    const list = await letters.list();
    const last = list.at(-1);
    return list.length >= count && last && match(last) ? last : undefined;
  });
}
