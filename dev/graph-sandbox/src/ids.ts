import { randomFillSync } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/**
 * Cryptographic random bytes handed out from a 4 KB buffer. Every request needs a trace id and
 * every publish a few ids; asking the OS for a handful of bytes each time (randomBytes per id) was
 * a visible share of the sandbox's CPU under load, one refill per 4 KB is not.
 */
class RandomPool {
  private readonly buffer = Buffer.alloc(4096);
  private offset = this.buffer.length;

  byte(): number {
    if (this.offset === this.buffer.length) {
      randomFillSync(this.buffer);
      this.offset = 0;
    }
    return this.buffer[this.offset++] as number;
  }

  /** Uniform digits: bytes >= 250 are rejected so no digit is favoured. */
  digits(length: number): string {
    let out = '';
    while (out.length < length) {
      const byte = this.byte();
      if (byte < 250) out += String(byte % 10);
    }
    return out;
  }

  /** Uniform base62 text: bytes >= 248 are rejected so no character is favoured. */
  base62(length: number): string {
    let out = '';
    while (out.length < length) {
      const byte = this.byte();
      if (byte < 248) out += BASE62.charAt(byte % 62);
    }
    return out;
  }
}

/**
 * Ids with the shapes Meta uses (facts §0.3, §4.1): strings of digits with realistic prefixes and
 * lengths, base64-like conversation and message ids. Uniqueness is checked against everything issued.
 */
export class IdFactory {
  private readonly issued = new Set<string>();
  private readonly random = new RandomPool();

  private unique(make: () => string): string {
    for (;;) {
      const id = make();
      if (!this.issued.has(id)) {
        this.issued.add(id);
        return id;
      }
    }
  }

  digits(prefix: string, length: number): string {
    return this.unique(() => prefix + this.random.digits(length - prefix.length));
  }

  private base62 = (length: number) => this.random.base62(length);

  user = () => this.digits('1022', 17);
  page = () => this.digits('1048576', 15);
  instagram = () => this.digits('178414', 17);
  container = () => this.digits('1795', 17);
  igMedia = () => this.digits('1790', 17);
  pagePostPart = () => this.digits('1221', 18);
  photo = () => this.digits('1229', 18);
  pageVideo = () => this.digits('1070', 16);
  uploadSession = () => this.digits('1071', 16);
  psid = () => this.digits('70', 16);
  igsid = () => this.digits('61', 16);
  igComment = () => this.digits('1785', 17);
  pageCommentPart = () => this.digits('9988', 15);
  shortcode = () => this.unique(() => this.base62(11));
  token = () => this.unique(() => `EAA${this.base62(96)}`);
  code = () => this.unique(() => `AQ${this.base62(120)}`);
  igConversation = () => this.unique(() => `aWdfZAG06${Buffer.from(this.base62(24)).toString('base64url')}`);
  messengerConversation = () => this.digits('t_', 17);
  igMessage = () =>
    this.unique(() => `aWdfZAG1faXRlbToxOklH${Buffer.from(this.base62(30)).toString('base64url')}`);
  messengerMessage = () => this.unique(() => `m_${this.base62(40)}`);
  attachment = () => this.digits('58', 16);
  /** Webhook deliveries are the sandbox's own notion, so their ids do not imitate Meta's. */
  delivery = () => this.unique(() => `wh_${this.base62(16)}`);
  traceId = () => this.base62(11);
}
