/** The services' OPS_PORT defaults, as the image's healthcheck knows them. */
export declare const DEFAULT_OPS_PORTS: Record<string, number>;
/** The URL the image's healthcheck asks for this service, or undefined when it knows none. */
export declare function healthUrl(
  service: string,
  env: Record<string, string | undefined>,
): string | undefined;
