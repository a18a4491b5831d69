/** The sandbox's whole state, in memory. `POST /__sandbox/reset` replaces it with a fresh one. */

import type { Container, IgMedia, PagePost, PageStory, PageVideo, Photo } from './publishing-types.ts';
import type { RunConfig } from './run-config.ts';

export type {
  Container,
  IgMedia,
  MediaFile,
  MediaProductType,
  NewContainer,
  PagePost,
  PageStory,
  PageVideo,
  PageVideoKind,
  PendingUpload,
  Photo,
  Processing,
  PublishOptions,
} from './publishing-types.ts';

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

export type AttachmentType = 'image' | 'video' | 'audio' | 'file';

/** A file in a DM (facts §4.2): an image carries its size; video/audio/file only a URL. */
export interface MessageAttachment {
  id: string;
  type: AttachmentType;
  /** Where the network serves the file: the given URL for inbound files, our CDN for sent ones. */
  url: string;
  /** A sent file: the URL the product gave the Send API (the sent log shows it). */
  sourceUrl?: string;
  mimeType: string;
  name: string;
  width: number;
  height: number;
}

export interface Message {
  id: string;
  conversationId: string;
  fromId: string;
  toId: string;
  /** null for a message that is only attachments. */
  text: string | null;
  attachments: MessageAttachment[];
  createdAt: number;
  inbound: boolean;
  /** The app that sent an outbound message (Send API: ours); null for the network's own app. */
  appId: string | null;
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
  /** null for a message that is only an attachment. */
  text: string | null;
  attachment_url: string | null;
  /** The Send API `tag` parameter, when one was given. */
  tag: string | null;
  /** The webhook this send caused (a message echo, a comment change), to replay it. */
  webhook_id: string | null;
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
  /** The code the created container or video fails processing with, later (not an error answer). */
  processingError: number | null;
}

type DeliveryKind = 'event' | 'deauthorize' | 'verification';

/** One webhook delivery: the exact request, kept so it can be replayed byte for byte. */
export interface Delivery {
  id: string;
  kind: DeliveryKind;
  url: string;
  /** null for the verification handshake (a GET with a fresh challenge each time). */
  request: { method: string; headers: Record<string, string>; body: string } | null;
}

export interface WebhookAttempt {
  /** The delivery's id: shared by its retries and replays. */
  id: string;
  kind: DeliveryKind;
  url: string;
  attempt: number;
  /** true when the attempt was asked for with POST /__sandbox/webhooks/:id/replay. */
  replay: boolean;
  status: number | null;
  error: string | null;
  at: string;
  body: string;
}

/**
 * A control rule: the next `remaining` event webhooks that match (the account, `entry.id`, and the
 * kind, when given) are not delivered, as when Meta loses one (see webhook-holds.ts).
 */
export interface WebhookHold {
  accountId: string | null;
  kind: 'message' | 'echo' | 'comment' | null;
  remaining: number;
}

/** A file sent through the Send API, as the network hosts it (`GET /__sandbox/cdn/:id/:name`). */
export interface HostedFile {
  bytes: Buffer;
  mimeType: string;
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
  pageVideos = new Map<string, PageVideo>();
  pageStories = new Map<string, PageStory>();
  participants = new Map<string, Participant>();
  conversations = new Map<string, Conversation>();
  messages = new Map<string, Message>();
  comments = new Map<string, Comment>();
  sent: SentRecord[] = [];
  faults: Fault[] = [];
  /** Conditions set with `POST /__sandbox/config` (usage headers, throttle, outage). */
  runConfig: RunConfig = {};
  webhookAttempts: WebhookAttempt[] = [];
  deliveries = new Map<string, Delivery>();
  webhookHolds: WebhookHold[] = [];
  hostedFiles = new Map<string, HostedFile>();
  /** Send API attachments uploaded with `is_reusable`, by attachment_id. */
  reusableAttachments = new Map<string, { accountId: string; attachment: MessageAttachment }>();
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
