/**
 * Tiny HTML helpers for the hosted connect pages: every interpolated value goes through `escapeHtml`,
 * and the layout links only our own stylesheet (no script, nothing from outside the service).
 */
const ENTITIES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

const escapeHtml = (value: string) => value.replace(/[&<>"']/g, (c) => ENTITIES[c] ?? c);

/** A value that is already HTML (built from escaped parts); plain strings are escaped. */
export class Html {
  constructor(readonly value: string) {}
  toString() {
    return this.value;
  }
}

export function html(strings: TemplateStringsArray, ...values: (string | number | Html | Html[])[]): Html {
  let out = strings[0] ?? '';
  values.forEach((value, i) => {
    const part = Array.isArray(value)
      ? value.map((v) => v.value).join('')
      : value instanceof Html
        ? value.value
        : escapeHtml(String(value));
    out += part + (strings[i + 1] ?? '');
  });
  return new Html(out);
}

/** Content-Security-Policy of every hosted page: our stylesheet, no scripts, no framing. */
export const PAGE_CSP =
  "default-src 'none'; style-src 'self'; img-src 'self'; base-uri 'none'; frame-ancestors 'none'";

export function layout(title: string, body: Html, assetsBase: string): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${title}</title>
<link rel="stylesheet" href="${assetsBase}/assets/connect.css">
</head>
<body>
<main class="card">
${body}
</main>
</body>
</html>`.value;
}
