/**
 * The app's calls to `/v1/embed/*` on our own origin, with the session token in the
 * Authorization header. A 401 means the session expired or was ended: every caller learns it
 * through `onExpired`, once, and the app shows it.
 */
export interface ApiError {
  status: number;
  code: string;
  message: string;
  field?: string;
}

export class ApiFailure extends Error {
  constructor(readonly error: ApiError) {
    super(error.message);
  }
}

export interface Page<T> {
  data: T[];
  total: number;
}

/** A page of a list that pages by cursor (conversations): pass `next_cursor` as `starting_after`. */
export interface CursorPage<T> extends Page<T> {
  has_more: boolean;
  next_cursor: string | null;
}

export type Api = ReturnType<typeof createApi>;

export function createApi(token: string, onExpired: () => void) {
  const authorization = `Bearer ${token}`;
  async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = { authorization };
    let payload: BodyInit | undefined;
    if (body instanceof FormData) payload = body;
    else if (body !== undefined) {
      headers['content-type'] = 'application/json';
      payload = JSON.stringify(body);
    }
    const response = await fetch(`/v1/embed${path}`, { method, headers, body: payload ?? null });
    if (response.status === 401) onExpired();
    if (response.status === 204) return undefined as T;
    const json = await response.json().catch(() => ({}));
    if (!response.ok) {
      const error = (json as { error?: Omit<ApiError, 'status'> }).error;
      throw new ApiFailure({
        status: response.status,
        code: error?.code ?? 'internal_error',
        message: error?.message ?? `The request failed (${response.status}).`,
        ...(error?.field ? { field: error.field } : {}),
      });
    }
    return json as T;
  }
  return {
    authorization,
    get: <T>(path: string) => call<T>('GET', path),
    post: <T>(path: string, body: unknown) => call<T>('POST', path, body),
    patch: <T>(path: string, body: unknown) => call<T>('PATCH', path, body),
    delete: (path: string) => call<void>('DELETE', path),
  };
}

/** The message to show for a failed call. */
export const failureText = (error: unknown) =>
  error instanceof ApiFailure ? error.message : 'Something went wrong. Please try again.';
