import type { Logger } from '@svc/logging';
import { Clock } from './clock.ts';
import type { SandboxConfig } from './config.ts';
import { IdFactory } from './ids.ts';
import { type IgAccount, type Page, Store, type User } from './store.ts';
import { WebhookSender } from './webhooks.ts';

/** Everything a handler needs: config, state, clock, id factory and the outbound webhook sender. */
export class World {
  store = new Store();
  readonly clock = new Clock();
  readonly ids = new IdFactory();
  readonly webhooks: WebhookSender;

  constructor(
    readonly config: SandboxConfig,
    readonly log: Logger,
  ) {
    this.webhooks = new WebhookSender(config, log, () => this.store, this.ids, this.clock);
  }

  reset(): void {
    this.store = new Store();
    this.clock.reset();
  }

  createUser(input: CreateUserInput): { user: User; pages: Page[]; accounts: IgAccount[] } {
    const user: User = {
      id: this.ids.user(),
      name: input.name ?? `Test User ${this.store.users.size + 1}`,
      pageIds: [],
    };
    this.store.users.set(user.id, user);
    const pages: Page[] = [];
    const accounts: IgAccount[] = [];
    for (const [index, spec] of input.pages.entries()) {
      const page: Page = {
        id: this.ids.page(),
        name: spec.name ?? `${user.name} Page ${index + 1}`,
        userId: user.id,
        category: 'Local business',
        igId: null,
        subscribedFields: [],
      };
      if (spec.instagram) {
        const username = spec.instagram.username ?? `sandbox_${page.id.slice(-6)}`;
        const account: IgAccount = { id: this.ids.instagram(), username, name: page.name, pageId: page.id };
        page.igId = account.id;
        this.store.igAccounts.set(account.id, account);
        accounts.push(account);
      }
      this.store.pages.set(page.id, page);
      user.pageIds.push(page.id);
      pages.push(page);
    }
    return { user, pages, accounts };
  }
}

export interface CreateUserInput {
  name?: string;
  pages: { name?: string; instagram?: { username?: string } | null }[];
}
