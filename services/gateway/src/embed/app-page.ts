import { html, layout } from '../connect/html.ts';

/**
 * The widget's HTML: the iframe document at /embed/app. It names the session's allowed origins
 * (the app greets and answers only those) and loads the versioned app bundle from our origin.
 */
export function appPage(input: { allowedOrigins: string[]; version: string }): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Social widget</title>
<link rel="stylesheet" href="app.${input.version}.css">
</head>
<body data-origins="${JSON.stringify(input.allowedOrigins)}">
<main id="app"><p>Loading…</p></main>
<script src="app.${input.version}.js"></script>
</body>
</html>`.value;
}

/** The page of an unknown, expired or ended session (never framed: frame-ancestors 'none'). */
export function endedPage(base: string): string {
  return layout(
    'This session has ended',
    html`<h1>This session has ended</h1><p>Widget sessions last a limited time. Reload the page that showed the widget to start a new one.</p>`,
    base,
  );
}

/**
 * The app's Content-Security-Policy: its own script, style and API only; images from us or
 * picked files (blob:); framed by the session's allowed origins alone.
 */
/**
 * An origin that can stand in `frame-ancestors` as it is: scheme, DNS host, optional port, and no
 * character that could end the directive. Identity refuses anything else when a session is minted;
 * sessions stored before it did are filtered here rather than trusted.
 */
const SAFE_ORIGIN = /^https?:\/\/[a-z0-9.-]{1,253}(:\d{1,5})?$/;

export function appCsp(allowedOrigins: string[]): string {
  const safe = allowedOrigins.filter((origin) => SAFE_ORIGIN.test(origin));
  const ancestors = safe.length > 0 ? safe.join(' ') : "'none'";
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' blob:",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    `frame-ancestors ${ancestors}`,
  ].join('; ');
}
