export * from './gen/svc/identity/v1/identity_pb.ts';
export {
  addService,
  createClient,
  grpc,
  type ServiceClient,
  type ServiceImplementation,
  startGrpcServer,
} from './grpc.ts';
