import { render } from 'preact';
import { connectHost } from './host.ts';
import { setLocale } from './labels.ts';
import { Root } from './root.tsx';

/**
 * The app's entry (app.js, loaded by /embed/app). The page carries the session's allowed origins;
 * the token arrives by postMessage from the host page. The height is reported to the host so the
 * iframe fits its content.
 */
async function start() {
  const allowed = JSON.parse(document.body.dataset.origins ?? '[]') as string[];
  const host = await connectHost(allowed);
  const { theme, locale } = host.init;
  document.documentElement.dataset.theme = theme === 'dark' ? 'dark' : 'light';
  if (locale) document.documentElement.lang = locale;
  setLocale(locale);
  const root = document.getElementById('app') as HTMLElement;
  render(<Root host={host} />, root);
  let last = 0;
  new ResizeObserver(() => {
    const height = Math.ceil(root.getBoundingClientRect().height) + 2;
    if (height === last) return;
    last = height;
    host.emit('resize', { height });
  }).observe(root);
}

void start();
