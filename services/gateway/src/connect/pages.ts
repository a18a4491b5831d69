import type { Account, ConnectOutcome } from '@svc/contracts';
import { type Html, html, layout } from './html.ts';

/**
 * The hosted connect pages, partner-neutral: what the end user sees between the partner's product
 * and the network's consent screen. Plain HTML forms and links, no script.
 */
const NETWORK_LABELS: Record<string, { name: string; action: string }> = {
  photo_network: { name: 'Instagram', action: 'Connect an Instagram professional account' },
  page_network: { name: 'Facebook Page', action: 'Connect a Facebook Page' },
};

const label = (network: string) => NETWORK_LABELS[network]?.name ?? network;

const STATUS_TEXT: Record<string, string> = {
  active: 'Connected',
  expired: 'Expired: connect again',
  revoked: 'Access removed: connect again',
  error: 'Needs attention',
};

export interface ConnectPageInput {
  base: string;
  token: string;
  workspaceName: string;
  networks: string[];
  accounts: Account[];
  expiresAt: string;
  notice?: string | undefined;
}

export function connectPage(input: ConnectPageInput): string {
  const linkBase = `${input.base}/${encodeURIComponent(input.token)}`;
  const buttons = input.networks.map(
    (n) => html`<a class="button" href="${linkBase}/${n}/start">${NETWORK_LABELS[n]?.action ?? n}</a>`,
  );
  const accounts =
    input.accounts.length === 0
      ? html`<p class="muted">No account is connected yet.</p>`
      : html`<ul class="plain">${input.accounts.map((a) => accountRow(a, linkBase))}</ul>`;
  const notice = input.notice ? html`<p class="notice ok" role="status">${input.notice}</p>` : html``;
  return layout(
    `Connect accounts to ${input.workspaceName}`,
    html`<h1>Connect your accounts to ${input.workspaceName}</h1>
<p>Choose a network. You will sign in with the network and choose what to share; we never see your password.</p>
${notice}
<div class="actions">${buttons}</div>
<h2>Connected accounts</h2>
${accounts}
<p class="muted">This link can be used until ${formatDate(input.expiresAt)}.</p>`,
    input.base,
  );
}

function accountRow(account: Account, linkBase: string): Html {
  const healthy = account.status === 'active';
  const handle = account.network === 'photo_network' ? `@${account.username}` : account.displayName;
  return html`<li class="row">
<div class="who"><strong>${handle}</strong>
<span class="muted">${label(account.network)}</span>
<span class="status ${healthy ? 'active' : 'problem'}">${STATUS_TEXT[account.status] ?? account.status}</span>
${account.lastError ? html`<p class="muted">${account.lastError}</p>` : html``}</div>
<form method="post" action="${linkBase}/accounts/${account.id}/disconnect">
<button type="submit" class="secondary" aria-label="Disconnect ${handle} (${label(account.network)})">Disconnect</button>
</form>
</li>`;
}

export function pickerPage(input: {
  base: string;
  outcome: ConnectOutcome;
  problem?: string | undefined;
}): string {
  const { outcome } = input;
  const choices = outcome.pages.map(
    (page) => html`<label class="choice"><input type="checkbox" name="page_id" value="${page.pageId}" checked>
<span><strong>${page.name}</strong>${
      page.instagramUsername
        ? html`<span class="muted"> · linked Instagram @${page.instagramUsername}</span>`
        : html`<span class="muted"> · no linked Instagram account</span>`
    }</span></label>`,
  );
  const problem = input.problem ? html`<p class="notice problem" role="alert">${input.problem}</p>` : html``;
  return layout(
    'Choose the Pages to connect',
    html`<h1>Choose the Pages to connect</h1>
<p>You shared several Pages${outcome.workspaceName ? html` with ${outcome.workspaceName}` : html``}. Keep the ones to connect.</p>
${problem}
<form method="post" action="${input.base}/oauth/pages">
<input type="hidden" name="choice_id" value="${outcome.choiceId}">
<fieldset><legend>Pages</legend>${choices}</fieldset>
<div class="actions"><button type="submit">Connect the selected Pages</button></div>
</form>`,
    input.base,
  );
}

export function resultPage(input: {
  base: string;
  outcome: ConnectOutcome;
  backUrl?: string | undefined;
  continueUrl?: string | undefined;
  /** A popup opened by the widget: say so, and close the window (the widget already knows). */
  closeScript?: string | undefined;
}): string {
  const { outcome } = input;
  const title =
    outcome.status === 'connected'
      ? 'Accounts connected'
      : outcome.status === 'partial'
        ? 'Connected, with something to fix'
        : outcome.status === 'denied'
          ? 'Nothing was connected'
          : 'The connection did not work';
  const connected = outcome.accounts.map(
    (a) =>
      html`<li class="row"><div class="who"><strong>${a.network === 'photo_network' ? `@${a.username}` : a.displayName}</strong>
<span class="muted">${label(a.network)}</span>
<span class="status ${a.status === 'active' ? 'active' : 'problem'}">${STATUS_TEXT[a.status] ?? a.status}</span></div></li>`,
  );
  const problems = outcome.problems.map(
    (p) => html`<li class="notice problem"><strong>${p.subject}:</strong> ${p.message}</li>`,
  );
  const links = [
    input.continueUrl ? html`<a class="button" href="${input.continueUrl}">Continue</a>` : html``,
    input.backUrl
      ? html`<a class="button secondary" href="${input.backUrl}">Back to the connect page</a>`
      : html``,
  ];
  return layout(
    title,
    html`<h1>${title}</h1>
${connected.length > 0 ? html`<h2>Connected</h2><ul class="plain">${connected}</ul>` : html``}
${problems.length > 0 ? html`<h2>What to fix</h2><div role="alert"><ul class="plain">${problems}</ul></div>` : html``}
<div class="actions">${links}</div>
${input.closeScript ? html`<p class="muted">You can close this window and go back to the page you came from.</p><script src="${input.closeScript}"></script>` : html``}`,
    input.base,
  );
}

/** A page that only explains (unknown or expired link, too many requests, bad address). */
export function messagePage(base: string, title: string, message: string): string {
  return layout(title, html`<h1>${title}</h1><p>${message}</p>`, base);
}

function formatDate(iso: string): string {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : `${date.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}
