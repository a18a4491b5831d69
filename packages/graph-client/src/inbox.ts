import {
  type Conversation,
  comment,
  conversation,
  type GraphComment,
  type GraphMessage,
  type GraphProfile,
  idOnly,
  type ListPage,
  list,
  message,
  parse,
  profile,
  type SendResult,
  sendResponse,
} from './shapes.ts';
import type { GraphTransport } from './transport.ts';

const MESSAGE_FIELDS = 'id,created_time,from,to,message,attachments';
const CONVERSATION_FIELDS = `id,updated_time,participants,messages.limit(20){${MESSAGE_FIELDS}}`;
const IG_COMMENT_FIELDS = 'id,text,timestamp,username,from,parent_id,hidden';
const IG_THREAD_FIELDS = `${IG_COMMENT_FIELDS},replies{id,text,timestamp,username,from}`;
const PAGE_COMMENT_FIELDS = 'id,message,created_time,from,parent{id},is_hidden,can_reply_privately';
const PROFILE_FIELDS: Record<Platform, string> = {
  instagram: 'name,username,profile_pic',
  messenger: 'first_name,last_name,profile_pic',
};

export type Platform = 'instagram' | 'messenger';

export interface SendInput {
  recipientId: string;
  /** Either text or an image the network fetches from `imageUrl` (one per message). */
  text?: string;
  imageUrl?: string;
  /** Messenger requires it; `RESPONSE` inside the 24 h window. */
  messagingType?: 'RESPONSE' | 'UPDATE' | 'MESSAGE_TAG';
  /** `HUMAN_AGENT` allows a human reply for 7 days (with messagingType MESSAGE_TAG). */
  tag?: 'HUMAN_AGENT' | 'ACCOUNT_UPDATE' | 'CONFIRMED_EVENT_UPDATE' | 'POST_PURCHASE_UPDATE';
}

/** Conversations, the Send API, private replies and comments (facts §4), all with a page token. */
export class InboxApi {
  constructor(private readonly t: GraphTransport) {}

  async conversations(
    token: string,
    pageId: string,
    input: { platform: Platform; userId?: string; limit?: number; after?: string },
  ): Promise<ListPage<Conversation>> {
    const query = {
      platform: input.platform,
      user_id: input.userId,
      limit: input.limit,
      after: input.after,
      fields: CONVERSATION_FIELDS,
    };
    return parse(
      list(conversation),
      await this.t.call({ method: 'GET', path: `/${pageId}/conversations`, token, query }),
      'conversations',
    );
  }

  async conversation(token: string, conversationId: string): Promise<Conversation> {
    const body = await this.t.call({
      method: 'GET',
      path: `/${conversationId}`,
      token,
      query: { fields: CONVERSATION_FIELDS },
    });
    return parse(conversation, body, 'conversation');
  }

  async message(token: string, messageId: string): Promise<GraphMessage> {
    return parse(
      message,
      await this.t.call({ method: 'GET', path: `/${messageId}`, token, query: { fields: MESSAGE_FIELDS } }),
      'message',
    );
  }

  /** Send API: JSON body as Meta requires. Not resent after a timeout: the person would get it twice. */
  async send(token: string, pageId: string, input: SendInput): Promise<SendResult> {
    const content = input.imageUrl
      ? { attachment: { type: 'image', payload: { url: input.imageUrl, is_reusable: true } } }
      : { text: input.text };
    const json: Record<string, unknown> = { recipient: { id: input.recipientId }, message: content };
    if (input.messagingType) json.messaging_type = input.messagingType;
    if (input.tag) json.tag = input.tag;
    return parse(
      sendResponse,
      await this.t.call({ method: 'POST', path: `/${pageId}/messages`, token, json }),
      'send',
    );
  }

  /** One DM in answer to a comment (`recipient.comment_id`), once per comment, within 7 days. */
  async privateReply(
    token: string,
    pageId: string,
    input: { commentId: string; text: string },
  ): Promise<SendResult> {
    const json = { recipient: { comment_id: input.commentId }, message: { text: input.text } };
    return parse(
      sendResponse,
      await this.t.call({ method: 'POST', path: `/${pageId}/messages`, token, json }),
      'private reply',
    );
  }

  /** A person's name, handle and picture; Instagram answers only after they messaged the account. */
  async profile(token: string, personId: string, platform: Platform): Promise<GraphProfile> {
    const query = { fields: PROFILE_FIELDS[platform] };
    return parse(
      profile,
      await this.t.call({ method: 'GET', path: `/${personId}`, token, query }),
      'profile',
    );
  }

  /** Top-level comments of a media, newest first, each with its replies. */
  async instagramComments(token: string, mediaId: string, limit = 50): Promise<ListPage<GraphComment>> {
    const body = await this.t.call({
      method: 'GET',
      path: `/${mediaId}/comments`,
      token,
      query: { fields: IG_THREAD_FIELDS, limit },
    });
    return parse(list(comment), body, 'instagram comments');
  }

  async instagramReplies(token: string, commentId: string): Promise<ListPage<GraphComment>> {
    const body = await this.t.call({
      method: 'GET',
      path: `/${commentId}/replies`,
      token,
      query: { fields: IG_COMMENT_FIELDS },
    });
    return parse(list(comment), body, 'instagram replies');
  }

  async commentOnInstagramMedia(token: string, mediaId: string, text: string): Promise<{ id: string }> {
    return parse(
      idOnly,
      await this.t.call({ method: 'POST', path: `/${mediaId}/comments`, token, form: { message: text } }),
      'comment',
    );
  }

  /** Replies go to top-level comments only. */
  async replyToInstagramComment(token: string, commentId: string, text: string): Promise<{ id: string }> {
    return parse(
      idOnly,
      await this.t.call({ method: 'POST', path: `/${commentId}/replies`, token, form: { message: text } }),
      'reply',
    );
  }

  /** Every comment of a Page post, replies included (flat, with `parent`). */
  async pageComments(token: string, objectId: string, limit = 50): Promise<ListPage<GraphComment>> {
    const body = await this.t.call({
      method: 'GET',
      path: `/${objectId}/comments`,
      token,
      query: { fields: PAGE_COMMENT_FIELDS, limit, filter: 'stream' },
    });
    return parse(list(comment), body, 'page comments');
  }

  /** Comments as the Page on a post, or replies to a comment when `objectId` is a comment id. */
  async commentOnPageObject(token: string, objectId: string, text: string): Promise<{ id: string }> {
    return parse(
      idOnly,
      await this.t.call({ method: 'POST', path: `/${objectId}/comments`, token, form: { message: text } }),
      'page comment',
    );
  }
}
