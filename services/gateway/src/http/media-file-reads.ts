/** A whole media file read from publishing, with what its headers say. */
export interface WholeFile {
  mime: string;
  size: number;
  /** When the signed URL stops being valid. */
  expiresAt: string;
  bytes: Buffer;
}

/**
 * Fetches of one signed URL at the same moment share one read from publishing. A post to several
 * accounts has each network fetch the same URL (publishing's URLs of one media are the same within
 * a minute) at about the same time (the post's jobs run together): the first fetch reads the file
 * and the others are answered with its bytes, so about half of what a signed download costs
 * (publishing's side) is paid once per post rather than once per account.
 *
 * Only a small file is shared: read whole before it is sent (up to `maxFileBytes`, and `maxBytes`
 * for all such reads at once; past either, the file streams as it arrives). Nothing is kept once
 * a read is done: a fetch that comes after it reads again, so a deleted media's URL fails as soon
 * as the deletion is done, as before.
 */
export class SharedFileReads {
  private readonly reading = new Map<string, Promise<WholeFile | undefined>>();
  private bytesHeld = 0;
  readonly maxFileBytes: number;

  constructor(private readonly maxBytes: number) {
    this.maxFileBytes = Math.floor(maxBytes / 16);
  }

  /** The read of this URL's file in flight, if one is: its file, or undefined when it shares none. */
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
    return (file) => {
      if (this.reading.get(token) === read) this.reading.delete(token);
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

  release(size: number): void {
    this.bytesHeld -= size;
  }
}
