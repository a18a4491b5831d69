import { z } from 'zod';
import { transportError } from './errors.ts';

/**
 * Response shapes, checked at the boundary: a Graph answer that does not match is reported as a
 * `network_error` instead of leaking `undefined` into the product. Meta's field names are kept.
 */
export function parse<S extends z.ZodType>(schema: S, body: unknown, label: string): z.infer<S> {
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  throw transportError(
    'network',
    `Graph API answered ${label} with an unexpected shape: ${result.error.issues[0]?.message ?? ''}`,
  );
}

const id = z.string().min(1);

const paging = z
  .looseObject({
    cursors: z.object({ before: z.string().optional(), after: z.string().optional() }).optional(),
    next: z.string().optional(),
  })
  .optional();

export const list = <T extends z.ZodType>(item: T) => z.object({ data: z.array(item), paging });
export type ListPage<T> = {
  data: T[];
  paging?: { cursors?: { before?: string; after?: string }; next?: string };
};

export const idOnly = z.looseObject({ id });

export const tokenResponse = z.object({
  access_token: z.string().min(1),
  token_type: z.string().optional(),
  expires_in: z.number().optional(),
});
export type TokenResponse = z.infer<typeof tokenResponse>;

export const debugTokenResponse = z.object({
  data: z.looseObject({
    app_id: z.string().optional(),
    type: z.string().optional(),
    is_valid: z.boolean(),
    expires_at: z.number().optional(),
    data_access_expires_at: z.number().optional(),
    issued_at: z.number().optional(),
    scopes: z.array(z.string()).optional(),
    granular_scopes: z
      .array(z.object({ scope: z.string(), target_ids: z.array(z.string()).optional() }))
      .optional(),
    user_id: z.string().optional(),
    profile_id: z.string().optional(),
    error: z
      .looseObject({ code: z.number(), message: z.string(), subcode: z.number().optional() })
      .optional(),
  }),
});
export type DebugToken = z.infer<typeof debugTokenResponse>['data'];

const igRef = z.looseObject({ id, username: z.string().optional() });

export const pageAccount = z.looseObject({
  id,
  name: z.string(),
  access_token: z.string().optional(),
  category: z.string().optional(),
  tasks: z.array(z.string()).optional(),
  picture: z.looseObject({ data: z.looseObject({ url: z.string().optional() }) }).optional(),
  instagram_business_account: igRef.optional(),
});
export type PageAccount = z.infer<typeof pageAccount>;

export const igUser = z.looseObject({
  id,
  username: z.string().optional(),
  name: z.string().optional(),
  profile_picture_url: z.string().optional(),
  followers_count: z.number().optional(),
  media_count: z.number().optional(),
});
export type InstagramUser = z.infer<typeof igUser>;

export const containerStatus = z.looseObject({
  id,
  status_code: z.enum(['IN_PROGRESS', 'FINISHED', 'PUBLISHED', 'ERROR', 'EXPIRED']),
  status: z.string().optional(),
});
export type ContainerStatus = z.infer<typeof containerStatus>;

/** `upload_phase=start` of a Reel or video Story [O: Meta's Reels guide]. */
export const uploadSession = z.looseObject({ video_id: id, upload_url: z.string() });

/** A Story's answer: `{ success, post_id }`. */
export const storyResponse = z.looseObject({
  success: z.boolean().optional(),
  post_id: z.string().optional(),
});

const phase = z.looseObject({
  status: z.string(),
  errors: z.array(z.looseObject({ code: z.number().optional(), message: z.string().optional() })).optional(),
});

/** A Page video's state (`?fields=status,...`): ready, processing or error, phase by phase. */
export const pageVideo = z.looseObject({
  id,
  status: z
    .looseObject({
      video_status: z.string(),
      processing_phase: phase.optional(),
      publishing_phase: phase.optional(),
    })
    .optional(),
  permalink_url: z.string().optional(),
  post_id: z.string().optional(),
  published: z.boolean().optional(),
});
export type PageVideo = z.infer<typeof pageVideo>;

/** A Page story as `/{page-id}/stories` lists it. */
export const pageStorySummary = z.looseObject({
  post_id: z.string(),
  media_id: z.string().optional(),
  media_type: z.string().optional(),
  creation_time: z.string().optional(),
  url: z.string().optional(),
});
export type PageStorySummary = z.infer<typeof pageStorySummary>;

export const pageVideoSummary = z.looseObject({
  id,
  description: z.string().optional(),
  created_time: z.string().optional(),
});
export type PageVideoSummary = z.infer<typeof pageVideoSummary>;

export const publishingLimit = z.object({
  data: z.array(
    z.looseObject({
      quota_usage: z.number(),
      config: z.object({ quota_total: z.number(), quota_duration: z.number() }).optional(),
    }),
  ),
});

export const igMedia = z.looseObject({
  id,
  caption: z.string().optional(),
  media_type: z.string().optional(),
  media_url: z.string().optional(),
  permalink: z.string().optional(),
  shortcode: z.string().optional(),
  timestamp: z.string().optional(),
});
export type InstagramMedia = z.infer<typeof igMedia>;

export const pagePost = z.looseObject({
  id,
  message: z.string().optional(),
  created_time: z.string().optional(),
  permalink_url: z.string().optional(),
  full_picture: z.string().optional(),
});
export type PagePost = z.infer<typeof pagePost>;

export const photoResponse = z.object({ id, post_id: z.string().optional() });

const person = z.looseObject({
  id,
  username: z.string().optional(),
  name: z.string().optional(),
  email: z.string().optional(),
});
const attachment = z.looseObject({
  mime_type: z.string().optional(),
  file_url: z.string().optional(),
  image_data: z
    .looseObject({ url: z.string(), width: z.number().optional(), height: z.number().optional() })
    .optional(),
  video_data: z.looseObject({ url: z.string() }).optional(),
});
export type GraphAttachment = z.infer<typeof attachment>;

export const message = z.looseObject({
  id,
  created_time: z.string().optional(),
  from: person.optional(),
  to: z.object({ data: z.array(person) }).optional(),
  message: z.string().optional(),
  attachments: z.object({ data: z.array(attachment) }).optional(),
});
export type GraphMessage = z.infer<typeof message>;

export const conversation = z.looseObject({
  id,
  updated_time: z.string().optional(),
  participants: z.object({ data: z.array(person) }).optional(),
  messages: z.object({ data: z.array(message) }).optional(),
});
export type Conversation = z.infer<typeof conversation>;

export const sendResponse = z.object({
  recipient_id: z.string().optional(),
  message_id: z.string().optional(),
});
export type SendResult = z.infer<typeof sendResponse>;

interface GraphReply {
  id: string;
  text?: string | undefined;
  timestamp?: string | undefined;
  username?: string | undefined;
  from?: { id: string; username?: string | undefined } | undefined;
}
const reply = z.looseObject({
  id,
  text: z.string().optional(),
  timestamp: z.string().optional(),
  username: z.string().optional(),
  from: person.optional(),
});

export const comment = z.looseObject({
  id,
  text: z.string().optional(),
  message: z.string().optional(),
  timestamp: z.string().optional(),
  created_time: z.string().optional(),
  username: z.string().optional(),
  from: person.optional(),
  parent_id: z.string().optional(),
  parent: z.looseObject({ id }).optional(),
  hidden: z.boolean().optional(),
  replies: z.object({ data: z.array(z.lazy((): z.ZodType<GraphReply> => reply)) }).optional(),
});
export type GraphComment = z.infer<typeof comment>;

/** A DM contact's profile (facts §4.5): IG gives name and username, Messenger first and last name. */
export const profile = z.looseObject({
  id,
  name: z.string().optional(),
  username: z.string().optional(),
  first_name: z.string().optional(),
  last_name: z.string().optional(),
  profile_pic: z.string().optional(),
});
export type GraphProfile = z.infer<typeof profile>;
