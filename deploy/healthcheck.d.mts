/** The services' OPS_PORT defaults, as the image's healthcheck knows them. */
export declare const DEFAULT_OPS_PORTS: Record<string, number>;
