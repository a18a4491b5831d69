import { announcedKeys, type Bus, SUBJECTS } from '@svc/bus';
import { LocalCache } from '@svc/cache';

/** Less free memory than this (a stream's chunk) reads no file whole: it streams. */
const MIN_WHOLE_RESERVE = 64 * 1024;

/** A whole media file read from publishing, with what its headers say. */
export interface WholeFile {
  mime: string;
  size: number;
  /** When the signed URL stops being valid. */
  expiresAt: string;
  bytes: Buffer;
}

interface ReadsOptions {
  /** Memory for whole reads in flight, and as much again for the files kept after them. */
  maxBytes: number;
  /** How long a file read whole is kept for more fetches of its URL; 0 keeps nothing. */
  keepMs: number;
  now?: () => number;
}

/**
 * Fetches of one signed URL share one read from publishing. A post to several accounts has each
 * network fetch the same URL (publishing's URLs of one media are the same within a minute) within
 * moments of each other (the post's jobs run together): the first fetch reads the file and the
 * others are answered with its bytes, so what a signed download costs (a gRPC stream from
 * publishing, a file opened there) is paid once per post rather than once per account.
 *
 * Only a small file is shared: read whole before it is sent (up to `maxFileBytes`, and `maxBytes`
 * for all such reads at once; past either, the file streams as it arrives). A file read whole is
 * then kept for `keepMs` (never past its URL's expiry), for the fetches that come just after, in
 * `maxBytes` more at most, the least recently used going first. Publishing announces a deleted
 * media once its files are removed (`media.deleted`; `media.purged` for a deleted workspace's,
 * which drops everything kept), so its URLs stop working on every gateway as soon as that
 * arrives, not only once the kept copy ages out.
 */
export class SharedFileReads {
  private readonly reading = new Map<string, Promise<WholeFile | undefined>>();
  private readonly kept: LocalCache<WholeFile>;
  private readonly subscriptions: { unsubscribe(): void }[] = [];
  private readonly now: () => number;
  private bytesHeld = 0;
  /** Counts the deletions announced: a read that began before one is shared, not kept. */
  private deletions = 0;
  readonly maxFileBytes: number;
  private readonly maxBytes: number;
  private readonly keepMs: number;

  constructor(options: ReadsOptions) {
    this.maxBytes = options.maxBytes;
    this.keepMs = options.keepMs;
    this.maxFileBytes = Math.floor(options.maxBytes / 16);
    this.now = options.now ?? Date.now;
    this.kept = new LocalCache({
      maxAgeMs: options.keepMs,
      maxBytes: options.maxBytes,
      sizeOf: (file) => file.size,
      now: this.now,
    });
  }

  /** Drops kept files on publishing's announcements: `media.deleted` and `media.purged`. */
  dropOnDeletions(bus: Bus): this {
    const deletedMedia = announcedKeys(bus, [SUBJECTS.mediaDeleted], (event) => event.data.media.id);
    const purgedWorkspaces = announcedKeys(bus, [SUBJECTS.mediaPurged], (signal) => signal.workspace);
    this.subscriptions.push(
      deletedMedia((mediaId) => this.forgetMedia(mediaId)),
      // Which kept files were the workspace's is not known here; a purge is rare, so all go.
      purgedWorkspaces(() => this.forget(() => true)),
    );
    return this;
  }

  /** The file of this URL kept from a read just done, if one is (and the URL is still valid). */
  keptFile(token: string): WholeFile | undefined {
    const kept = this.kept.peek(token);
    return kept && Date.parse(kept.expiresAt) > this.now() ? kept : undefined;
  }

  /**
   * The read of this URL's file in flight, if one is: its file, or undefined when it shares none
   * (a file streamed, a read that failed).
   */
  inFlight(token: string): Promise<WholeFile | undefined> | undefined {
    return this.reading.get(token);
  }

  /**
   * Announces a read of this URL's file; the answer settles it (the first call counts), with the
   * whole file to share or undefined (a file streamed, or a read that failed).
   */
  start(token: string): (file: WholeFile | undefined) => void {
    let settle: (file: WholeFile | undefined) => void = () => {};
    const read = new Promise<WholeFile | undefined>((resolve) => {
      settle = resolve;
    });
    this.reading.set(token, read);
    const deletions = this.deletions;
    return (file) => {
      if (this.reading.get(token) !== read) return settle(file);
      this.reading.delete(token);
      if (file && this.keepMs > 0 && deletions === this.deletions) this.kept.set(token, file);
      settle(file);
    };
  }

  /**
   * Reserves memory to read a file of `size` bytes whole; false when it is too large or too much
   * is being read so already (the file then streams). `release` gives it back once sent.
   */
  reserve(size: number): boolean {
    if (size > this.maxFileBytes || this.bytesHeld + size > this.maxBytes) return false;
    this.bytesHeld += size;
    return true;
  }

  /**
   * Reserves memory to read a file whole before its size is known: as much as a file read whole
   * may take, within the first three quarters of `maxBytes` (the rest is left to reads whose size
   * is known, so that a burst of these does not leave small files to stream unshared); 0 when
   * less than a stream's chunk is left there. The caller releases what the file did not take.
   */
  reserveUpTo(): number {
    const bytes = Math.min(this.maxFileBytes, Math.floor((this.maxBytes * 3) / 4) - this.bytesHeld);
    if (bytes < MIN_WHOLE_RESERVE) return 0;
    this.bytesHeld += bytes;
    return bytes;
  }

  release(size: number): void {
    this.bytesHeld -= size;
  }

  /** A media's files: its signed URLs' tokens start with its id. */
  forgetMedia(mediaId: string): void {
    this.forget((token) => token.startsWith(`${mediaId}.`));
  }

  private forget(test: (token: string) => boolean): void {
    this.deletions += 1;
    this.kept.forgetWhere(test);
  }

  close(): void {
    for (const subscription of this.subscriptions) subscription.unsubscribe();
    this.subscriptions.length = 0;
    this.kept.close();
  }
}
