import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { APP_CSS, APP_JS, WIDGET_JS } from '../src/index.ts';

/**
 * The widget's weight budgets (issue 15): partners pay for widget.js on every page view, and the
 * app's first render must stay fast on a slow phone. Measured on the bundles `generate` built.
 */
const gzipped = (text: string) => gzipSync(Buffer.from(text), { level: 9 }).length;

describe('widget bundle sizes', () => {
  // Guarantee: widget.js stays under 5 KB gzip and the app (script and style) under 80 KB gzip.
  it('keeps the loader under 5 KB and the app under 80 KB, gzipped', () => {
    const loader = gzipped(WIDGET_JS);
    const app = gzipped(APP_JS) + gzipped(APP_CSS);
    console.log(`widget.js ${loader} B gzip; app ${app} B gzip`);
    expect(WIDGET_JS).toContain('SocialWidget');
    expect(APP_JS.length).toBeGreaterThan(1000);
    expect(loader).toBeLessThan(5 * 1024);
    expect(app).toBeLessThan(80 * 1024);
  });
});
