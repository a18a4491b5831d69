import type { z } from 'zod';
import type { Unreadable } from './meta-items.ts';

/**
 * Small lenient readers for Meta's payloads: a field of an unexpected type is taken as absent
 * rather than failing the whole message (Meta adds fields and sends `null` where its docs show
 * objects, e.g. a `fallback` attachment with `"payload": null`).
 */
export type Json = Record<string, unknown>;

export const isRecord = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The value as a string (ids arrive as numbers too), or undefined. */
export function text(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return undefined;
}

export const recordOf = (value: unknown): Json => (isRecord(value) ? value : {});

/** Zod's issues in one line: the paths and messages, never the values (they may be personal). */
export function issuesOf(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.join('.') || '(root)'} ${i.message}`).join('; ');
}

export const unreadable = (reason: string): Unreadable => ({ type: 'unreadable', reason });

/** Meta's times: ms in messaging items, seconds in `changes` (and in some Instagram examples). */
export function metaTime(time: number): Date {
  return new Date(time < 1e11 ? time * 1000 : time);
}

/** A URL partners may open or show: http(s) only (an attachment URL is passed on as the network gave it). */
export function webUrl(value: unknown): string | null {
  const url = text(value);
  if (url === undefined) return null;
  const lower = url.slice(0, 8).toLowerCase();
  return lower.startsWith('https://') || lower.startsWith('http://') ? url : null;
}
