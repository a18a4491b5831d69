import type { z } from '@svc/config';

/** Errors of the control API itself: plain JSON, not Graph's envelope (it is not part of Meta's API). */
export class ControlError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export function parseBody<T extends z.ZodType>(schema: T, body: unknown): z.infer<T> {
  const result = schema.safeParse(body ?? {});
  if (!result.success)
    throw new ControlError(
      400,
      result.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; '),
    );
  return result.data;
}

/** The control route's target, or a 404 naming what is missing. */
export function need<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new ControlError(404, `${what} not found`);
  return value;
}
