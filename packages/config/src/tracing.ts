import { z } from 'zod';

/**
 * OpenTelemetry tracing, read by every service with the standard variable names (see
 * packages/ops/src/tracing.ts). Off unless an OTLP endpoint is set or `OTEL_TRACES_EXPORTER`
 * names an exporter. Spans go out as OTLP over HTTP with JSON bodies, which every collector takes;
 * another protocol is refused at start rather than silently not exported.
 */
export const tracingVariables = {
  OTEL_SDK_DISABLED: z
    .enum(['true', 'false'])
    .default('false')
    .transform((v) => v === 'true'),
  OTEL_TRACES_EXPORTER: z.enum(['otlp', 'console', 'none']).optional(),
  // The collector's base URL (`/v1/traces` is added), or the traces URL itself (taken as is).
  OTEL_EXPORTER_OTLP_ENDPOINT: z.url().optional(),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: z.url().optional(),
  OTEL_EXPORTER_OTLP_PROTOCOL: z
    .enum(['http/json'], { message: 'only http/json is supported (OTLP over HTTP, JSON bodies)' })
    .optional(),
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: z
    .enum(['http/json'], { message: 'only http/json is supported (OTLP over HTTP, JSON bodies)' })
    .optional(),
  // `key=value,...` sent with every export (a vendor's API key): read by the exporter itself.
  OTEL_EXPORTER_OTLP_HEADERS: z.string().optional(),
  // Defaults to the service's own name (gateway, publishing...).
  OTEL_SERVICE_NAME: z.string().min(1).optional(),
  // `key=value,...` added to every span's resource (deployment.environment=production, say).
  OTEL_RESOURCE_ATTRIBUTES: z.string().optional(),
  OTEL_TRACES_SAMPLER: z
    .enum([
      'always_on',
      'always_off',
      'traceidratio',
      'parentbased_always_on',
      'parentbased_always_off',
      'parentbased_traceidratio',
    ])
    .default('parentbased_always_on'),
  // The ratio of the *traceidratio samplers (0 to 1).
  OTEL_TRACES_SAMPLER_ARG: z.coerce.number().min(0).max(1).default(1),
  // How long finished spans wait to be exported together.
  OTEL_BSP_SCHEDULE_DELAY: z.coerce.number().int().min(1).max(60_000).default(5_000),
};

export type TracingConfig = z.infer<z.ZodObject<typeof tracingVariables>>;
