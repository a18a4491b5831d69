export { LocalCache } from './local-cache.ts';
