export {
  API_KEY_PREFIX,
  EMBED_TOKEN_PREFIX,
  generateApiKey,
  generateEmbedToken,
  hashToken,
  keyDisplayPrefix,
} from './api-keys.ts';
export { DEVELOPMENT_KEYRING, envKeyring, Keyring, parseKeyring } from './keyring.ts';
export { hmacSha256Hex, randomBase62, safeEqual, sha256Hex } from './primitives.ts';
export { type ResealReport, reseal, type SealedValue, type SealedValues } from './reseal.ts';
