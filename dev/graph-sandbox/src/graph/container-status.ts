import { processingState } from '../processing.ts';
import type { Container } from '../store.ts';
import type { World } from '../world.ts';

/**
 * A container's `status_code` and `status` (facts §2.3). A carousel parent is IN_PROGRESS while a
 * child is, and ends in ERROR when a child does, with that child's code.
 */
type ContainerStatus = 'IN_PROGRESS' | 'FINISHED' | 'PUBLISHED' | 'ERROR' | 'EXPIRED';

const CONTAINER_TTL_MS = 86_400_000;

interface ContainerState {
  code: ContainerStatus;
  /** The error code of an ERROR container (the subcode its `status` text carries). */
  failure: number | null;
}

export function containerStatus(world: World, c: Container): ContainerState {
  const now = world.clock.now();
  if (c.published) return { code: 'PUBLISHED', failure: null };
  if (now - c.createdAt > CONTAINER_TTL_MS) return { code: 'EXPIRED', failure: null };
  const parts = [c, ...c.children.flatMap((id) => world.store.containers.get(id) ?? [])];
  const failed = parts.find((part) => processingState(part.processing, now) === 'failed');
  if (failed) return { code: 'ERROR', failure: failed.processing.failure };
  const done = parts.every((part) => processingState(part.processing, now) === 'done');
  return { code: done ? 'FINISHED' : 'IN_PROGRESS', failure: null };
}

/** The free text Meta puts beside the code; for ERROR it carries the subcode clients parse out. */
export function statusText(state: ContainerState): string {
  switch (state.code) {
    case 'IN_PROGRESS':
      return 'In Progress: Media is still being processed.';
    case 'FINISHED':
      return 'Finished: Media has been uploaded and it is ready to be published.';
    case 'PUBLISHED':
      return 'Published: Media has been published.';
    case 'EXPIRED':
      return 'Expired: Media was not published within 24 hours.';
    case 'ERROR':
      return `Error: Media upload has failed with error code ${state.failure}`;
  }
}
