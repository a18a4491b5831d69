export { callerOf, type IdempotencyClaim } from './caller.ts';
export * from './gen/svc/accounts/v1/accounts_pb.ts';
export * from './gen/svc/common/v1/caller_pb.ts';
export * from './gen/svc/common/v1/idempotency_pb.ts';
export * from './gen/svc/identity/v1/identity_pb.ts';
export * from './gen/svc/inbox/v1/inbox_pb.ts';
export * from './gen/svc/publishing/v1/publishing_pb.ts';
export * from './gen/svc/webhooks/v1/webhooks_pb.ts';
export {
  addService,
  CALLER_CREDENTIAL_METADATA,
  type CallContext,
  CHANNEL_OPTIONS,
  createClient,
  type GrpcService,
  grpc,
  type ServiceClient,
  type ServiceImplementation,
  startGrpcServer,
} from './grpc.ts';
