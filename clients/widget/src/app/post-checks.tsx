import type { PostDryRunView } from '@svc/contracts/public';
import { ApiFailure, failureText } from './api.ts';
import type { AccountView } from './context.ts';
import { accountName, humanize, networkName } from './labels.ts';

export type Check =
  | { state: 'idle' | 'checking' }
  | { state: 'ok'; run: PostDryRunView }
  | { state: 'problem'; text: string };

/** A refusal as people read it: the server's message, and the field it names (`media.0`). */
export function refusalText(error: unknown): string {
  const field = error instanceof ApiFailure && error.error.field ? ` (${error.error.field})` : '';
  return humanize(failureText(error)) + field;
}

/**
 * The server's own checks of the draft (a dry run): per target what would be sent, or the
 * refusal naming the limit, the item and the field.
 */
export function Checks({ check, accounts }: { check: Check; accounts: AccountView[] }) {
  const named = (id: string) => accounts.find((a) => a.id === id);
  return (
    <div class="checks" aria-live="polite">
      <h2>Checks</h2>
      {check.state === 'idle' && (
        <p class="muted">Write a caption or add media, and choose where to publish, to run the checks.</p>
      )}
      {check.state === 'checking' && <p class="muted">Checking…</p>}
      {check.state === 'problem' && <p class="notice problem">{check.text}</p>}
      {check.state === 'ok' && (
        <ul class="plain">
          {check.run.targets.map((t) => (
            <li key={t.account} class="check ok">
              {checkLine(named(t.account), t)}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

/** "@name (Instagram): ready to send as reel", ", converted to JPEG" when it will be. */
function checkLine(account: AccountView | undefined, target: PostDryRunView['targets'][number]): string {
  const who = account ? accountName(account) : target.username;
  const converted = target.would_send.converted_to_jpeg.length > 0 ? ', converted to JPEG' : '';
  const kind = target.would_send.kind.replace('_', ' ');
  return `${who} (${networkName(target.network)}): ready to send as ${kind}${converted}`;
}
