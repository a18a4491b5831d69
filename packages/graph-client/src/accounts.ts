import { z } from 'zod';
import { type InstagramUser, igUser, list, type PageAccount, pageAccount, parse } from './shapes.ts';
import type { GraphTransport } from './transport.ts';

const ME = z.looseObject({ id: z.string(), name: z.string().optional() });
const PAGE_FIELDS = 'id,name,access_token,category,tasks,picture,instagram_business_account{id,username}';
const IG_USER_FIELDS = 'id,username,name,profile_picture_url,followers_count,media_count';

/** Who the token is, which Pages it reaches (with page tokens) and their Instagram accounts (facts §1.4). */
export class AccountsApi {
  constructor(private readonly t: GraphTransport) {}

  async me(token: string): Promise<z.infer<typeof ME>> {
    return parse(
      ME,
      await this.t.call({ method: 'GET', path: '/me', token, query: { fields: 'id,name' } }),
      '/me',
    );
  }

  async permissions(token: string): Promise<{ permission: string; status: string }[]> {
    const body = await this.t.call({ method: 'GET', path: '/me/permissions', token });
    return parse(list(z.object({ permission: z.string(), status: z.string() })), body, '/me/permissions')
      .data;
  }

  /** Every Page the user granted, following `paging.next` until it is absent. */
  async pages(userToken: string, maxPages = 20): Promise<PageAccount[]> {
    const pages: PageAccount[] = [];
    let after: string | undefined;
    for (let i = 0; i < maxPages; i++) {
      const body = await this.t.call({
        method: 'GET',
        path: '/me/accounts',
        token: userToken,
        query: { fields: PAGE_FIELDS, limit: 100, after },
      });
      const page = parse(list(pageAccount), body, '/me/accounts');
      pages.push(...page.data);
      after = page.paging?.cursors?.after;
      if (!page.paging?.next || !after) break;
    }
    return pages;
  }

  async page(token: string, pageId: string): Promise<PageAccount> {
    const body = await this.t.call({
      method: 'GET',
      path: `/${pageId}`,
      token,
      query: { fields: PAGE_FIELDS },
    });
    return parse(pageAccount, body, 'page');
  }

  async instagramUser(token: string, igUserId: string, fields = IG_USER_FIELDS): Promise<InstagramUser> {
    const body = await this.t.call({ method: 'GET', path: `/${igUserId}`, token, query: { fields } });
    return parse(igUser, body, 'instagram user');
  }
}
