/**
 * The embeddable widget's browser bundles, built by `generate` (scripts/generate.ts): the loader
 * partners include (widget.js) and the app our iframe runs, each with a content version for
 * cache-busting URLs.
 */
export { APP_CSS, APP_JS, APP_VERSION, WIDGET_JS, WIDGET_VERSION } from './generated/assets.ts';
export type { HostEvent, Surface } from './protocol.ts';
