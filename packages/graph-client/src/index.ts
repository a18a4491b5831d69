export { type BreakerPolicy, DEFAULT_BREAKER } from './breaker.ts';
export { GraphClient } from './client.ts';
export {
  DEFAULT_GRAPH_API_VERSION,
  type GraphCallObserver,
  type GraphClientConfig,
  type GraphClientEnv,
  graphClientConfigFromEnv,
  graphClientEnv,
  graphClientEnvSchema,
  parseGraphClientEnv,
  type RetryPolicy,
} from './config.ts';
export {
  classify,
  GraphApiError,
  type GraphErrorKind,
  type GraphUsage,
  isTokenProblem,
  type MetaErrorObject,
  RATE_LIMIT_CODES,
  readUsage,
  type TokenProblem,
} from './errors.ts';
export type { Platform, SendInput } from './inbox.ts';
export type { ReelContainer } from './instagram.ts';
export type {
  ContainerStatus,
  Conversation,
  DebugToken,
  GraphAttachment,
  GraphComment,
  GraphMessage,
  GraphProfile,
  InstagramMedia,
  InstagramUser,
  ListPage,
  PageAccount,
  PagePost,
  PageVideo,
  SendResult,
  TokenResponse,
} from './shapes.ts';
export { type GraphRequest, GraphTransport } from './transport.ts';
export { type MetaWebhookBody, readWebhookBody } from './webhook-body.ts';
export {
  answerVerificationChallenge,
  parseSignedRequest,
  type SignedRequestPayload,
  type VerificationAnswer,
  verifyWebhookSignature,
} from './webhooks.ts';
