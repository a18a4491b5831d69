/** The sandbox's whole state, in memory. `POST /__sandbox/reset` replaces it with a fresh one. */

export type Platform = 'instagram' | 'messenger';

export interface User {
  id: string;
  name: string;
  pageIds: string[];
}

export interface Page {
  id: string;
  name: string;
  userId: string;
  category: string;
  igId: string | null;
  subscribedFields: string[];
}

export interface IgAccount {
  id: string;
  username: string;
  name: string;
  pageId: string;
}

/** Why a token stopped working, as Meta's 190 subcode (458 app removed, 463 expired). */
type InvalidReason = 458 | 460 | 463;

export interface Token {
  value: string;
  kind: 'user' | 'page';
  userId: string;
  pageId: string | null;
  scopes: string[];
  issuedAt: number;
  /** ms since epoch; null = never expires. */
  expiresAt: number | null;
  longLived: boolean;
  invalid: InvalidReason | null;
}

export interface AuthCode {
  code: string;
  userId: string;
  redirectUri: string;
  scopes: string[];
  pageIds: string[];
  createdAt: number;
  used: boolean;
}

/** What a user granted the app; gone after deauthorization. */
export interface Grant {
  scopes: string[];
  pageIds: string[];
}

type ContainerKind = 'IMAGE' | 'CAROUSEL_ITEM' | 'CAROUSEL';

export interface Container {
  id: string;
  igId: string;
  kind: ContainerKind;
  imageUrl: string | null;
  children: string[];
  caption: string | null;
  createdAt: number;
  readyAt: number;
  published: boolean;
  mediaId: string | null;
}

export interface IgMedia {
  id: string;
  igId: string;
  shortcode: string;
  caption: string | null;
  mediaType: 'IMAGE' | 'CAROUSEL_ALBUM';
  mediaUrls: string[];
  createdAt: number;
  containerId: string;
  commentsEnabled: boolean;
}

export interface PagePost {
  id: string;
  pageId: string;
  message: string | null;
  link: string | null;
  photoIds: string[];
  createdAt: number;
}

export interface Photo {
  id: string;
  pageId: string;
  url: string;
  caption: string | null;
  published: boolean;
  postId: string | null;
  createdAt: number;
}

/** A person on the other side of a DM thread (IGSID or PSID), scoped to one account. */
export interface Participant {
  id: string;
  platform: Platform;
  accountId: string;
  username: string | null;
  name: string | null;
}

export interface Conversation {
  id: string;
  platform: Platform;
  accountId: string;
  participantId: string;
  updatedAt: number;
  messageIds: string[];
  lastInboundAt: number | null;
}

export interface Message {
  id: string;
  conversationId: string;
  fromId: string;
  toId: string;
  text: string;
  createdAt: number;
  inbound: boolean;
}

export interface Comment {
  id: string;
  platform: Platform;
  accountId: string;
  objectId: string;
  parentId: string | null;
  fromId: string;
  fromName: string;
  text: string;
  createdAt: number;
  hidden: boolean;
  privateReplyAt: number | null;
}

export interface SentRecord {
  type: 'message' | 'private_reply' | 'comment' | 'comment_reply';
  network: 'instagram' | 'facebook';
  account_id: string;
  id: string;
  recipient_id: string | null;
  object_id: string | null;
  text: string;
  sent_at: string;
}

export interface Fault {
  method: string | null;
  pattern: RegExp;
  path: string;
  remaining: number;
  status: number | null;
  error: Record<string, unknown> | null;
  headers: Record<string, string>;
  delayMs: number;
}

export interface WebhookAttempt {
  kind: 'event' | 'deauthorize' | 'verification';
  url: string;
  attempt: number;
  status: number | null;
  error: string | null;
  at: string;
  body: string;
}

export class Store {
  users = new Map<string, User>();
  pages = new Map<string, Page>();
  igAccounts = new Map<string, IgAccount>();
  tokens = new Map<string, Token>();
  codes = new Map<string, AuthCode>();
  grants = new Map<string, Grant>();
  containers = new Map<string, Container>();
  igMedia = new Map<string, IgMedia>();
  pagePosts = new Map<string, PagePost>();
  photos = new Map<string, Photo>();
  participants = new Map<string, Participant>();
  conversations = new Map<string, Conversation>();
  messages = new Map<string, Message>();
  comments = new Map<string, Comment>();
  sent: SentRecord[] = [];
  faults: Fault[] = [];
  webhookAttempts: WebhookAttempt[] = [];
  /** Publish times per IG account, for the rolling 24 h quota. */
  publishTimes = new Map<string, number[]>();
  /** Page tokens already minted for (user token, page), so /me/accounts answers stably. */
  pageTokenFor = new Map<string, string>();

  findConversation(accountId: string, participantId: string): Conversation | undefined {
    for (const c of this.conversations.values()) {
      if (c.accountId === accountId && c.participantId === participantId) return c;
    }
    return undefined;
  }
}
