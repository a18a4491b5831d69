import type { Processing } from './store.ts';
import type { World } from './world.ts';

/**
 * Meta processes an uploaded video for a while before it can be published (facts §2.1, §2.3). The
 * sandbox knows at once whether processing will fail (it checks the file when it arrives), but,
 * like Meta, shows the outcome only when processing ends.
 */
export type ProcessingState = 'waiting' | 'processing' | 'failed' | 'done';

export function processingState(p: Processing, now: number): ProcessingState {
  if (p.readyAt === null) return 'waiting';
  if (now < p.readyAt) return 'processing';
  return p.failure === null ? 'done' : 'failed';
}

/**
 * How long videos take: the run-time `video_processing_ms` when set (read at creation, so a change
 * only affects later uploads), else the container processing time the sandbox started with.
 */
export function videoProcessingMs(world: World): number {
  return world.store.runConfig.video_processing_ms ?? world.config.containerProcessingMs;
}

/** Processing not started yet: it waits for the file. A processing fault decides the outcome already. */
export function awaitingFile(durationMs: number, faultFailure: number | null): Processing {
  return { durationMs, readyAt: null, failure: faultFailure };
}

/** All bytes are in: processing runs from now, ending with the fault's code or else the check's. */
export function startProcessing(p: Processing, now: number, checkFailure: number | null): void {
  p.readyAt = now + p.durationMs;
  p.failure ??= checkFailure;
}
