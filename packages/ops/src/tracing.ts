import { DiagLogLevel, diag, propagation, context as rootContext, trace } from '@opentelemetry/api';
import type { TracingConfig } from '@svc/config';
import { disableTracing, enableTracing, type Logger } from '@svc/logging';

/**
 * OpenTelemetry's SDK for one service process, following the standard variables (see
 * packages/config/src/tracing.ts). Tracing is opt-in: with no exporter configured nothing here is
 * imported beyond `@opentelemetry/api`, whose hooks (packages/logging/src/trace.ts) then return
 * at once. On, it registers a tracer provider (batching spans to the OTLP/HTTP JSON exporter), the
 * AsyncLocalStorage context manager and the W3C trace-context propagator.
 */
export interface Tracing {
  /** Exports the spans still batched and stops the exporter. */
  shutdown(): Promise<void>;
}

/** On with an OTLP endpoint, or an exporter named by OTEL_TRACES_EXPORTER; off otherwise. */
function tracingWanted(config: TracingConfig): boolean {
  if (config.OTEL_SDK_DISABLED) return false;
  if (config.OTEL_TRACES_EXPORTER) return config.OTEL_TRACES_EXPORTER !== 'none';
  return Boolean(config.OTEL_EXPORTER_OTLP_ENDPOINT ?? config.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
}

/**
 * Registers the SDK once per process. Services started side by side in one process (tests) share
 * it; the first one's name labels their spans, and the last one to stop shuts it down.
 */
let shared: { started: Promise<{ shutdown(): Promise<void> }>; users: number } | undefined;

export async function startTracing(
  service: string,
  config: TracingConfig,
  logger: Logger,
): Promise<Tracing | undefined> {
  if (!tracingWanted(config)) return undefined;
  shared ??= { started: registerSdk(service, config, logger), users: 0 };
  const current = shared;
  current.users++;
  const provider = await current.started;
  logger.info({ service_name: config.OTEL_SERVICE_NAME ?? service }, 'tracing on');
  return {
    async shutdown() {
      if (--current.users > 0) return;
      if (shared === current) shared = undefined;
      disableTracing();
      await provider.shutdown();
      trace.disable();
      rootContext.disable();
      propagation.disable();
    },
  };
}

async function registerSdk(service: string, config: TracingConfig, logger: Logger) {
  const [sdk, { AsyncLocalStorageContextManager }, { W3CTraceContextPropagator }, resources, semconv] =
    await Promise.all([
      import('@opentelemetry/sdk-trace'),
      import('@opentelemetry/context-async-hooks'),
      import('@opentelemetry/core'),
      import('@opentelemetry/resources'),
      import('@opentelemetry/semantic-conventions'),
    ]);
  // An exporter that cannot reach its collector says so in the service's log (OTel is silent).
  diag.setLogger(
    {
      error: (message) => logger.warn({ otel: message }, 'tracing problem'),
      warn: (message) => logger.warn({ otel: message }, 'tracing problem'),
      info: () => {},
      debug: () => {},
      verbose: () => {},
    },
    DiagLogLevel.WARN,
  );
  const resource = resources.resourceFromAttributes({
    ...keyValues(config.OTEL_RESOURCE_ATTRIBUTES),
    [semconv.ATTR_SERVICE_NAME]: config.OTEL_SERVICE_NAME ?? service,
  });
  const exporter =
    config.OTEL_TRACES_EXPORTER === 'console' ? new sdk.ConsoleSpanExporter() : await otlpExporter(config);
  const provider = new sdk.TracerProvider({
    resource,
    sampler: samplerOf(sdk, config),
    spanProcessors: [
      new sdk.BatchSpanProcessor({ exporter, scheduledDelayMillis: config.OTEL_BSP_SCHEDULE_DELAY }),
    ],
  });
  trace.setGlobalTracerProvider(provider);
  rootContext.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  enableTracing();
  return provider;
}

async function otlpExporter(config: TracingConfig) {
  const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http');
  const base = (config.OTEL_EXPORTER_OTLP_ENDPOINT ?? 'http://localhost:4318').replace(/\/+$/, '');
  return new OTLPTraceExporter({ url: config.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? `${base}/v1/traces` });
}

type Sdk = typeof import('@opentelemetry/sdk-trace');

function samplerOf(sdk: Sdk, config: TracingConfig) {
  const ratio = new sdk.TraceIdRatioBasedSampler(config.OTEL_TRACES_SAMPLER_ARG);
  switch (config.OTEL_TRACES_SAMPLER) {
    case 'always_on':
      return new sdk.AlwaysOnSampler();
    case 'always_off':
      return new sdk.AlwaysOffSampler();
    case 'traceidratio':
      return ratio;
    case 'parentbased_always_off':
      return new sdk.ParentBasedSampler({ root: new sdk.AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new sdk.ParentBasedSampler({ root: ratio });
    default:
      return new sdk.ParentBasedSampler({ root: new sdk.AlwaysOnSampler() });
  }
}

/** `a=1,b=2` (OTEL_RESOURCE_ATTRIBUTES' format, values percent-encoded) as a record. */
function keyValues(text: string | undefined): Record<string, string> {
  const pairs: Record<string, string> = {};
  for (const pair of (text ?? '').split(',')) {
    const at = pair.indexOf('=');
    if (at > 0) pairs[pair.slice(0, at).trim()] = decodeURIComponent(pair.slice(at + 1).trim());
  }
  return pairs;
}
