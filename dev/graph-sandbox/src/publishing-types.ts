/** What publishing leaves in the store: containers, Instagram media, Page posts, photos, videos and stories. */

type ContainerKind = 'IMAGE' | 'CAROUSEL_ITEM' | 'CAROUSEL' | 'REELS' | 'STORIES';

type MediaKind = 'image' | 'video';

/** One file of a post: where the network has it and what it is. */
export interface MediaFile {
  kind: MediaKind;
  url: string;
}

/** The options Meta keeps with a container besides its file and caption (facts §2.2); null or empty when not given. */
export interface PublishOptions {
  shareToFeed: boolean | null;
  coverUrl: string | null;
  thumbOffsetMs: number | null;
  collaborators: string[];
  locationId: string | null;
  audioName: string | null;
}

/** The bytes of a resumable upload, kept until the last one has arrived. */
export interface PendingUpload {
  /** Declared by the first piece (or at `start`); null before. */
  fileSize: number | null;
  chunks: Buffer[];
  received: number;
}

/**
 * Meta's processing of an uploaded file: it starts when all bytes are there (`readyAt` null until
 * then) and ends at `readyAt`, either well or with `failure` (a Meta error code). The failure is
 * known early (the sandbox checks the file at once) but only shown once processing ends.
 */
export interface Processing {
  /** How long processing takes, fixed when the container or video is created. */
  durationMs: number;
  readyAt: number | null;
  failure: number | null;
}

export interface Container {
  id: string;
  igId: string;
  kind: ContainerKind;
  /** null for a carousel parent, and for a resumable container until its bytes are in. */
  file: MediaFile | null;
  children: string[];
  caption: string | null;
  options: PublishOptions;
  createdAt: number;
  processing: Processing;
  /** A resumable container (`upload_type=resumable`) waiting for its bytes; null otherwise. */
  upload: PendingUpload | null;
  published: boolean;
  mediaId: string | null;
}

/** A container as its create call builds it, before its file, processing and upload are known. */
export type NewContainer = Omit<Container, 'file' | 'processing' | 'upload'>;

export type MediaProductType = 'FEED' | 'REELS' | 'STORY';

export interface IgMedia {
  id: string;
  igId: string;
  shortcode: string;
  caption: string | null;
  mediaType: 'IMAGE' | 'VIDEO' | 'CAROUSEL_ALBUM';
  productType: MediaProductType;
  /** The post's files in order: one, or a carousel's children. */
  media: MediaFile[];
  options: PublishOptions;
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

/** `/videos` (a feed video), `/video_reels` or `/video_stories`. */
export type PageVideoKind = 'video' | 'reel' | 'story';

/** A video of a Page: uploaded at once or in phases, processed, then published (facts §3.1). */
export interface PageVideo {
  id: string;
  pageId: string;
  kind: PageVideoKind;
  title: string | null;
  description: string | null;
  /** The file as given (`file_url`) or the sandbox's copy of uploaded bytes; null until it is in. */
  url: string | null;
  upload: PendingUpload | null;
  /** The `upload_session_id` of a resumable `/videos` upload. */
  uploadSessionId: string | null;
  createdAt: number;
  processing: Processing;
  /** When the app asked for publication (`/videos` at once; reels and stories at `finish`); null = not asked. */
  publishAskedAt: number | null;
  /** The story's or post's id, known from `finish` on. */
  postId: string | null;
}

/** A Page story from `/photo_stories` (an unpublished photo) or `/video_stories`. */
export interface PageStory {
  postId: string;
  pageId: string;
  photoId: string | null;
  videoId: string | null;
  createdAt: number;
}
