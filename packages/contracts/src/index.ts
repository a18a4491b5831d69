export * from './gen/svc/accounts/v1/accounts_pb.ts';
export * from './gen/svc/identity/v1/identity_pb.ts';
export {
  addService,
  CALLER_CREDENTIAL_METADATA,
  type CallContext,
  createClient,
  grpc,
  type ServiceClient,
  type ServiceImplementation,
  startGrpcServer,
} from './grpc.ts';
