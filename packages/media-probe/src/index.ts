export { type Container, sniffContainer } from './container.ts';
export { DEFAULT_LIMITS, type ProbeLimits } from './limits.ts';
export { PROBE_FAILURES, type ProbeFailure, VideoProbeError } from './probe-error.ts';
export { type ProbeOptions, probeVideo, type VideoSource } from './probe-video.ts';
export type { VideoFacts } from './video-facts.ts';
