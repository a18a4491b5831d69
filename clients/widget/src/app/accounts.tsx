import { useEffect, useState } from 'preact/hooks';
import { failureText, type Page } from './api.ts';
import type { AccountView, Ctx } from './context.ts';
import { accountName, formatTime, NETWORKS, networkName, STATUS_TEXT } from './labels.ts';
import { Notice, type NoticeValue } from './notice.tsx';
import { RECONNECTED } from './stream.ts';

/**
 * The connect surface: the workspace's accounts with their state, reconnect and disconnect, and
 * a button per network that opens the network's consent in a popup. The outcome comes back over
 * the stream (account.connected), so it arrives even when the popup lost its opener.
 */
export function Accounts({ ctx }: { ctx: Ctx }) {
  const [accounts, setAccounts] = useState<AccountView[] | null>(null);
  const [notice, setNotice] = useState<NoticeValue | null>(null);
  const [manualUrl, setManualUrl] = useState<string | null>(null);

  const load = () =>
    ctx.api
      .get<Page<AccountView>>('/accounts?limit=100')
      .then((page) => setAccounts(page.data))
      .catch((error) => setNotice({ kind: 'problem', text: failureText(error) }));

  useEffect(() => {
    void load();
    return ctx.subscribe((event) => {
      if (!/^account\./.test(event.type) && event.type !== RECONNECTED) return;
      void load();
      if (event.type === 'account.connected') {
        setManualUrl(null);
        setNotice({ kind: 'ok', text: 'The account is connected.' });
      }
    });
  }, []);

  async function connect(network: string) {
    // Opened at once, in the click, so no popup blocker stops it; sent to the consent next.
    const popup = window.open('', 'social-widget-connect', 'popup,width=560,height=720');
    setNotice({ kind: 'info', text: `Finish connecting ${networkName(network)} in the window that opened.` });
    try {
      const { url } = await ctx.api.post<{ url: string }>('/connect', { network });
      const flow = new URL(url, location.href);
      // Our hosted flow then ends on a page that closes the popup by itself.
      if (flow.origin === location.origin) flow.searchParams.set('popup', '1');
      if (popup) popup.location.href = flow.href;
      else setManualUrl(flow.href);
    } catch (error) {
      popup?.close();
      setNotice({ kind: 'problem', text: failureText(error) });
    }
  }

  async function disconnect(account: AccountView) {
    try {
      await ctx.api.delete(`/accounts/${account.id}`);
      setNotice({ kind: 'ok', text: `${accountName(account)} was disconnected.` });
      await load();
    } catch (error) {
      setNotice({ kind: 'problem', text: failureText(error) });
    }
  }

  return (
    <section aria-labelledby="accounts-title">
      <h1 id="accounts-title">Connected accounts</h1>
      <Notice notice={notice} />
      {manualUrl && (
        <p>
          The window was blocked.{' '}
          <a href={manualUrl} target="_blank" rel="noopener">
            Open the sign-in in a new window
          </a>
        </p>
      )}
      <div class="actions">
        {NETWORKS.map((n) => (
          <button type="button" key={n.id} onClick={() => connect(n.id)}>
            {n.action}
          </button>
        ))}
      </div>
      {accounts === null ? (
        <p class="muted">Loading accounts…</p>
      ) : accounts.length === 0 ? (
        <p class="muted">No account is connected yet.</p>
      ) : (
        <ul class="plain">
          {accounts.map((account) => (
            <AccountRow
              key={account.id}
              account={account}
              onReconnect={() => connect(account.network)}
              onDisconnect={() => disconnect(account)}
            />
          ))}
        </ul>
      )}
    </section>
  );
}

function AccountRow(props: { account: AccountView; onReconnect(): void; onDisconnect(): void }) {
  const { account } = props;
  const name = accountName(account);
  const healthy = account.status === 'active';
  return (
    <li class="row">
      <div class="who">
        <strong>{name}</strong>
        <span class="muted">{networkName(account.network)}</span>
        <span class={`status ${healthy ? 'active' : 'problem'}`}>
          {STATUS_TEXT[account.status] ?? account.status}
        </span>
        {account.last_error && <span class="muted">{account.last_error}</span>}
        <span class="muted">Connected {formatTime(account.connected_at)}</span>
      </div>
      <div class="actions">
        {!healthy && (
          <button type="button" onClick={props.onReconnect} aria-label={`Reconnect ${name}`}>
            Reconnect
          </button>
        )}
        <button
          type="button"
          class="secondary"
          onClick={props.onDisconnect}
          aria-label={`Disconnect ${name} (${networkName(account.network)})`}
        >
          Disconnect
        </button>
      </div>
    </li>
  );
}
