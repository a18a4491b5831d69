import { escapeHtml } from './html.ts';
import type { IgAccount, Page, User } from './store.ts';

/** The Facebook Login dialog as a real page: pick a user, see the scopes, choose Pages, Approve or Deny. */
export interface DialogParams {
  client_id: string;
  redirect_uri: string;
  state: string;
  scope: string;
}

export interface ConsentUser {
  user: User;
  pages: { page: Page; instagram: IgAccount | null }[];
}

function hiddenFields(params: DialogParams): string {
  return (Object.keys(params) as (keyof DialogParams)[])
    .map((key) => `<input type="hidden" name="${key}" value="${escapeHtml(params[key])}">`)
    .join('\n');
}

function userBlock({ user, pages }: ConsentUser, index: number): string {
  const pageRows = pages
    .map(
      ({
        page,
        instagram,
      }) => `<label class="page"><input type="checkbox" name="page_id" value="${page.id}" checked>
        ${escapeHtml(page.name)}${instagram ? ` <small>(Instagram: @${escapeHtml(instagram.username)})</small>` : ''}</label>`,
    )
    .join('\n');
  return `<div class="user">
    <label><input type="radio" name="user_id" value="${user.id}" ${index === 0 ? 'checked' : ''}
      data-user="${user.id}"> <strong>${escapeHtml(user.name)}</strong></label>
    <fieldset data-pages-of="${user.id}"><legend>Pages to grant</legend>${pageRows || '<em>No Pages</em>'}</fieldset>
  </div>`;
}

export function consentPage(appName: string, params: DialogParams, users: ConsentUser[]): string {
  const scopes = params.scope
    .split(/[,\s]+/)
    .filter(Boolean)
    .map((s) => `<li>${escapeHtml(s)}</li>`)
    .join('');
  const body =
    users.length === 0
      ? `<p id="no-users">No sandbox users yet. Create one with <code>POST /__sandbox/users</code>, or:</p>
         <form method="post" action="/__sandbox/consent/demo-user">${hiddenFields(params)}
         <button type="submit" id="create-demo-user">Create a test user with a Page and an Instagram account</button></form>`
      : `<form method="post" action="/__sandbox/consent" id="consent-form">
         ${hiddenFields(params)}
         <h2>Continue as</h2>${users.map(userBlock).join('\n')}
         <h2>${escapeHtml(appName)} is requesting</h2><ul id="scopes">${scopes || '<li>public_profile</li>'}</ul>
         <button type="submit" name="decision" value="approve" id="approve">Approve</button>
         <button type="submit" name="decision" value="deny" id="deny">Deny</button>
       </form>`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Log in with Facebook (sandbox)</title>
<style>body{font-family:sans-serif;max-width:40rem;margin:2rem auto}.user{margin:.5rem 0}
fieldset{margin:.25rem 0 .5rem 1.5rem}fieldset[disabled]{opacity:.4}.page{display:block}</style></head>
<body><h1>Log in to ${escapeHtml(appName)}</h1><p><small>Graph API sandbox: nothing here reaches Meta.</small></p>
${body}
<script>
// Only the chosen user's Pages are submitted: disabled fieldsets send nothing.
const sync = () => document.querySelectorAll('[data-pages-of]').forEach((fs) => {
  const radio = document.querySelector('input[data-user="' + fs.dataset.pagesOf + '"]');
  fs.disabled = !(radio && radio.checked);
});
document.querySelectorAll('input[name=user_id]').forEach((r) => r.addEventListener('change', sync));
sync();
</script></body></html>`;
}

export function dialogErrorPage(message: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Error</title></head>
<body><h1>Sorry, something went wrong.</h1><p id="error">${escapeHtml(message)}</p></body></html>`;
}
