import { errors } from '@svc/errors';
import type { PublishingConfig } from '../config.ts';
import type { KnownMediaRows } from './known-media.ts';
import { type MediaFiles, variantKey } from './media-files.ts';
import { verifyMediaToken } from './signed-url.ts';
import type { ByteRange, StoredFile, WholeRead } from './storage.ts';

type TokenConfig = Pick<PublishingConfig, 'PUBLIC_BASE_URL' | 'MEDIA_URL_SECRET' | 'MEDIA_URL_TTL_SECONDS'>;

/** What a file's answer says besides its bytes. */
interface SignedFileHead {
  mime: string;
  expiresAt: Date;
}

/**
 * The files behind signed URLs, as the gateway asks for them: streamed (a range, or a file too
 * large to hold) or read whole (a photo). A forged, expired or dangling token is not_found.
 */
export class SignedFiles {
  constructor(
    private readonly rows: KnownMediaRows,
    private readonly files: MediaFiles,
    private readonly config: TokenConfig,
    private readonly now: () => Date,
  ) {}

  /** The file (or the `range` of it) as a stream: the caller reads it to its end or destroys it. */
  async open(token: string, range?: ByteRange): Promise<StoredFile & SignedFileHead> {
    const signed = await this.find(token);
    const file = await this.files.open(signed.key, range);
    if (!file) throw errors.notFound('media file');
    return { ...file, mime: signed.mime, expiresAt: signed.expiresAt };
  }

  /** The file read whole when it is at most `maxBytes`, else its size alone. */
  async read(token: string, maxBytes: number): Promise<WholeRead & SignedFileHead> {
    const signed = await this.find(token);
    const file = await this.files.readWhole(signed.key, maxBytes);
    if (!file) throw errors.notFound('media file');
    return { ...file, mime: signed.mime, expiresAt: signed.expiresAt };
  }

  /** Where the file a token grants lives, and what it is. */
  private async find(token: string): Promise<SignedFileHead & { key: string }> {
    const verified = verifyMediaToken(this.config, token, this.now());
    if (!verified) throw errors.notFound('media file');
    const media = (await this.rows.read([verified.mediaId])).get(verified.mediaId);
    if (!media) throw errors.notFound('media file');
    const mime = verified.variant === 'jpeg' ? 'image/jpeg' : media.mime;
    return { key: variantKey(media, verified.variant), mime, expiresAt: verified.expiresAt };
  }
}
