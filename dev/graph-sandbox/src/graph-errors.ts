/**
 * Meta's error object (facts §7.1) as a throwable. Handlers throw these; the app's error handler
 * renders `{ error: {...} }` with the status (400 for nearly everything, 500 for codes 1/2) and,
 * for 190, the `WWW-Authenticate` header Meta sends.
 */
export interface GraphErrorBody {
  message: string;
  type: string;
  code: number;
  error_subcode?: number;
  is_transient?: boolean;
  error_user_title?: string;
  error_user_msg?: string;
}

export class GraphFailure extends Error {
  constructor(
    readonly body: GraphErrorBody,
    readonly status = 400,
  ) {
    super(body.message);
  }
}

function fail(code: number, message: string, extra: Partial<GraphErrorBody> = {}, status = 400) {
  return new GraphFailure({ message, type: 'OAuthException', code, ...extra }, status);
}

/** `(#100) ...`: invalid parameter. */
export const invalidParam = (message: string, subcode?: number, extra: Partial<GraphErrorBody> = {}) =>
  fail(100, message.startsWith('(#') ? message : `(#100) ${message}`, {
    ...(subcode ? { error_subcode: subcode } : {}),
    ...extra,
  });

export const requiredParam = (name: string) => invalidParam(`The parameter ${name} is required`);

export const unsupportedGet = (id: string, method = 'get') =>
  new GraphFailure({
    message: `Unsupported ${method} request. Object with ID '${id}' does not exist, cannot be loaded due to missing permissions, or does not support this operation. Please read the Graph API documentation at https://developers.facebook.com/docs/graph-api`,
    type: 'GraphMethodException',
    code: 100,
    error_subcode: 33,
  });

export const unknownPath = (edge: string) => fail(2500, `Unknown path components: /${edge}`);

export const missingToken = () => fail(104, 'An access token is required to request this resource.');

export const cannotParseToken = () => fail(190, 'Invalid OAuth access token - Cannot parse access token');

export function expiredToken(expiresAt: number, now: number) {
  const at = (ms: number) => new Date(ms).toUTCString();
  return fail(
    190,
    `Error validating access token: Session has expired on ${at(expiresAt)}. The current time is ${at(now)}.`,
    { error_subcode: 463 },
  );
}

export const removedApp = (appId: string) =>
  fail(190, `Error validating access token: The user has not authorized application ${appId}.`, {
    error_subcode: 458,
  });

export const passwordChanged = () =>
  fail(
    190,
    'Error validating access token: The session has been invalidated because the user changed their password or Facebook has changed the session for security reasons.',
    { error_subcode: 460 },
  );

export const pageTokenRequired = () =>
  fail(190, '(#190) This method must be called with a Page Access Token', { error_subcode: 2069032 });

/** Missing permission: code 10 on Instagram edges, 200 on Pages edges (facts §7.2). */
export const permissionMissing = (permission: string, code: 10 | 200 = 200) =>
  fail(code, `(#${code}) Requires ${permission} permission to manage the object`);

export const notAuthorizedForObject = () =>
  fail(200, "(#200) The user hasn't authorized the application to perform this action");

export const nonexistingField = (field: string, nodeType: string) =>
  invalidParam(`(#100) Tried accessing nonexisting field (${field}) on node type (${nodeType})`);

/** A publishing error with the user-facing title and text Meta adds to 2207xxx errors. */
export const publishError = (
  code: number,
  subcode: number,
  message: string,
  userTitle: string,
  userMsg: string,
) =>
  fail(code, message, {
    error_subcode: subcode,
    is_transient: false,
    error_user_title: userTitle,
    error_user_msg: userMsg,
  });

export const outsideWindow = (platform: 'instagram' | 'messenger') =>
  platform === 'messenger'
    ? fail(
        10,
        '(#10) This message is sent outside of allowed window. Learn more about the new policy here: https://developers.facebook.com/docs/messenger-platform/policy-overview',
        { error_subcode: 2018278 },
      )
    : fail(10, '(#10) This message is sent outside of allowed window.', { error_subcode: 2534022 });

export { fail as graphFailure };
