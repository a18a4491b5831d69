/**
 * What a connected account needs from the user's grant, and how to say what is missing.
 * Connect time is where other products fail their users silently: an account that cannot publish
 * or answer messages must say so at once (status `error`, a precise `last_error`), not look healthy
 * until the first post fails.
 */
export const NETWORKS = ['page_network', 'photo_network'] as const;
export type Network = (typeof NETWORKS)[number];

export const isNetwork = (value: string): value is Network => (NETWORKS as readonly string[]).includes(value);

interface Requirement {
  scope: string;
  purpose: string;
}

const REQUIREMENTS: Record<Network, Requirement[]> = {
  page_network: [
    { scope: 'pages_show_list', purpose: 'find the Page' },
    { scope: 'pages_read_engagement', purpose: 'read the Page, its posts and comments' },
    { scope: 'pages_manage_posts', purpose: 'publish posts' },
    { scope: 'pages_manage_engagement', purpose: 'answer comments' },
    { scope: 'pages_manage_metadata', purpose: 'receive new messages and comments' },
    { scope: 'pages_messaging', purpose: 'read and answer messages' },
  ],
  photo_network: [
    { scope: 'instagram_basic', purpose: 'read the Instagram profile' },
    { scope: 'instagram_content_publish', purpose: 'publish posts' },
    { scope: 'instagram_manage_comments', purpose: 'read and answer comments' },
    { scope: 'instagram_manage_messages', purpose: 'read and answer messages' },
    { scope: 'pages_show_list', purpose: 'find the linked Page' },
    { scope: 'pages_read_engagement', purpose: 'read the linked Page' },
  ],
};

/** Page roles (`tasks`) that allow publishing and messaging (facts §1.4). */
const PUBLISH_TASKS = ['CREATE_CONTENT', 'MANAGE'];
const MESSAGING_TASKS = ['MESSAGING', 'MODERATE', 'MANAGE'];

const scopesOf = (network: Network) => REQUIREMENTS[network].map((r) => r.scope);

/**
 * The scopes the consent dialog asks for. Connecting Pages also connects their linked Instagram
 * accounts, so it asks for both networks' permissions.
 */
export function requestedScopes(network: Network): string[] {
  const networks: Network[] = network === 'page_network' ? ['page_network', 'photo_network'] : [network];
  return [...new Set([...networks.flatMap(scopesOf), 'business_management'])];
}

export interface GrantedScopes {
  scopes: string[];
  /** Scopes the user limited to some Pages or Instagram accounts (debug_token granular_scopes). */
  granular?: { scope: string; target_ids?: string[] | undefined }[] | undefined;
}

/**
 * The scopes that apply to one Page or Instagram account: a scope the user limited to chosen
 * targets counts only for those; one without targets counts for all.
 */
export function scopesFor(grant: GrantedScopes, targetId: string, pageId: string): string[] {
  return grant.scopes.filter((scope) => {
    const targets = grant.granular?.find((g) => g.scope === scope)?.target_ids;
    return !targets || targets.includes(targetId) || targets.includes(pageId);
  });
}

/** What an account cannot do with this grant, as one sentence the user can act on, or null. */
export function grantProblem(
  network: Network,
  accountName: string,
  scopes: string[],
  pageTasks?: string[] | undefined,
): string | null {
  const missing = REQUIREMENTS[network].filter((r) => !scopes.includes(r.scope));
  const problems: string[] = [];
  if (missing.length > 0) {
    const list = missing.map((r) => `${r.scope} (to ${r.purpose})`).join(', ');
    problems.push(
      `${accountName} is missing permissions: ${list}. Connect again and leave these permissions switched on in the consent screen.`,
    );
  }
  if (pageTasks && network === 'page_network') {
    if (!pageTasks.some((t) => PUBLISH_TASKS.includes(t)))
      problems.push(
        `Your role on ${accountName} does not allow publishing; ask a Page admin for a role with content creation (or full control), then connect again.`,
      );
    if (!pageTasks.some((t) => MESSAGING_TASKS.includes(t)))
      problems.push(
        `Your role on ${accountName} does not allow messaging; ask a Page admin for a role with messages access, then connect again.`,
      );
  }
  return problems.length > 0 ? problems.join(' ') : null;
}
