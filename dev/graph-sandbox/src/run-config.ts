import { z } from '@svc/config';
import type { FastifyInstance } from 'fastify';
import { parseBody } from './control-errors.ts';

/**
 * Conditions of Meta's side that tests set while the sandbox runs (`GET|POST /__sandbox/config`):
 * the usage Meta reports in its rate-limit headers, a business object throttled, an outage, how
 * long videos take to process. One object in the store, so a reset ends them all and later keys
 * slot in beside these. What the first three do to Graph answers is in run-conditions.ts; the
 * processing time is read in processing.ts.
 */

/** Usage values are percentages of a limit (facts §8.2): whole numbers, 100 and over when throttled. */
const percent = z.number().int().nonnegative();
/** Meta's ids are strings of digits (facts §0.3); a typo here would silently match nothing. */
const objectId = z.string().regex(/^\d+$/, 'a business object id is a string of digits');

const appUsageSchema = z.strictObject({ call_count: percent, total_cputime: percent, total_time: percent });
const businessUsageSchema = z.strictObject({
  type: z.string().min(1),
  call_count: percent,
  total_cputime: percent,
  total_time: percent,
  /** Minutes, as Meta sends it. */
  estimated_time_to_regain_access: z.number().int().nonnegative(),
});
/** The business use-case codes: 80001 Pages, 80002 Instagram, 80006 Messenger (facts §7.2). */
const BUC_CODES = [80001, 80002, 80006] as const;
const throttleSchema = z.strictObject({
  business_id: objectId,
  code: z.literal(BUC_CODES).default(80002),
  // Meta gives whole minutes; a fraction lets a test wait seconds instead.
  regain_minutes: z
    .number()
    .nonnegative()
    .max(24 * 60),
});
const outageSchema = z.strictObject({ status: z.number().int().min(500).max(599).default(503) });
/** How long Meta takes to process a video (facts §2.1: minutes at most) or an image; ten minutes keeps tests bounded. */
const videoProcessingSchema = z
  .number()
  .int()
  .nonnegative()
  .max(10 * 60_000);

const usagePatchSchema = z.strictObject({
  app: appUsageSchema.nullable().optional(),
  business: z.record(objectId, z.array(businessUsageSchema)).nullable().optional(),
});
/** A POST body: each key given replaces that key, `null` clears it, a key left out is kept. */
const configPatchSchema = z.strictObject({
  usage: usagePatchSchema.nullable().optional(),
  throttle: throttleSchema.nullable().optional(),
  outage: outageSchema.nullable().optional(),
  video_processing_ms: videoProcessingSchema.nullable().optional(),
  image_processing_ms: videoProcessingSchema.nullable().optional(),
});

type AppUsage = z.infer<typeof appUsageSchema>;
export type BusinessUsage = z.infer<typeof businessUsageSchema>;
export type Throttle = z.infer<typeof throttleSchema>;
type ConfigPatch = z.infer<typeof configPatchSchema>;

/** The run-time configuration as stored; an absent key means Meta behaves normally there. */
export interface RunConfig {
  usage?: { app?: AppUsage; business?: Record<string, BusinessUsage[]> };
  throttle?: Throttle;
  outage?: { status: number };
  /** Processing time of videos created from now on (containers, Page videos); see processing.ts. */
  video_processing_ms?: number;
  /** Processing time of image containers and carousel parents created from now on. */
  image_processing_ms?: number;
}

type Patch<T> = { [K in keyof T]?: T[K] | null };

/** `current` with each given key of `patch` replaced, or removed when it is `null`. */
function assign<T extends object>(current: T, patch: Patch<T>): T {
  const next = { ...current } as Record<string, unknown>;
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete next[key];
    else if (value !== undefined) next[key] = value;
  }
  return next as T;
}

/** Top-level keys merge; so do `usage.app` and `usage.business`, so one can change without the other. */
function mergeRunConfig(current: RunConfig, patch: ConfigPatch): RunConfig {
  const { usage, ...rest } = patch;
  const next = assign(current, rest);
  if (usage === undefined) return next;
  const merged = usage === null ? {} : assign(current.usage ?? {}, usage);
  if (Object.keys(merged).length === 0) delete next.usage;
  else next.usage = merged;
  return next;
}

/** The routes; `store` is asked for at each request, since a reset replaces the store. */
export function registerRunConfig(app: FastifyInstance, store: () => { runConfig: RunConfig }): void {
  app.get('/__sandbox/config', () => ({ config: store().runConfig }));
  app.post('/__sandbox/config', (req) => {
    const patch = parseBody(configPatchSchema, req.body);
    const current = store();
    current.runConfig = mergeRunConfig(current.runConfig, patch);
    return { config: current.runConfig };
  });
}
