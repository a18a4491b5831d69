import { randomInt } from 'node:crypto';
import { randomBase62 } from '@svc/crypto';

/**
 * Ids with the shapes Meta uses (facts §0.3, §4.1): strings of digits with realistic prefixes and
 * lengths, base64-like conversation and message ids. Uniqueness is checked against everything issued.
 */
export class IdFactory {
  private readonly issued = new Set<string>();

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
    return this.unique(() => {
      let out = prefix;
      while (out.length < length) out += String(randomInt(10));
      return out;
    });
  }

  user = () => this.digits('1022', 17);
  page = () => this.digits('1048576', 15);
  instagram = () => this.digits('178414', 17);
  container = () => this.digits('1795', 17);
  igMedia = () => this.digits('1790', 17);
  pagePostPart = () => this.digits('1221', 18);
  photo = () => this.digits('1229', 18);
  psid = () => this.digits('70', 16);
  igsid = () => this.digits('61', 16);
  igComment = () => this.digits('1785', 17);
  pageCommentPart = () => this.digits('9988', 15);
  shortcode = () => this.unique(() => randomBase62(11));
  token = () => this.unique(() => `EAA${randomBase62(96)}`);
  code = () => this.unique(() => `AQ${randomBase62(120)}`);
  igConversation = () => this.unique(() => `aWdfZAG06${Buffer.from(randomBase62(24)).toString('base64url')}`);
  messengerConversation = () => this.digits('t_', 17);
  igMessage = () =>
    this.unique(() => `aWdfZAG1faXRlbToxOklH${Buffer.from(randomBase62(30)).toString('base64url')}`);
  messengerMessage = () => this.unique(() => `m_${randomBase62(40)}`);
  traceId = () => randomBase62(11);
}
