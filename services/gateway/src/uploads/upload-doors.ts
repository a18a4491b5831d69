import { errors } from '@svc/errors';
import { enforcePermission, type PermissionRow } from '../auth/permissions.ts';
import type { Principal } from '../auth/principal.ts';

/**
 * Where the one tus implementation is reached, and how each caller is bound: the API's door for
 * keys, and the widget's for embed sessions (as `embed/widget-route.ts` gives operations a second
 * door). The protocol, the handlers and publishing's scoping by caller are the same behind both.
 */
export interface UploadDoor {
  /** The collection's path; an upload is `${base}/:id` (its Location). */
  base: string;
  /** The matrix row every request of this door is held to. */
  permission: PermissionRow;
  /**
   * The workspace a new upload goes in, from the caller and the `workspace` its Upload-Metadata
   * names (if any); refused when the caller may not name that one.
   */
  workspaceOf(principal: Principal, named: string | undefined): string;
}

/** API keys: the workspace is named in Upload-Metadata, as media name it in their body. */
const API_UPLOADS: UploadDoor = {
  base: '/v1/uploads',
  permission: 'objects',
  workspaceOf(principal, named) {
    if (!named) throw errors.validation('Upload-Metadata', 'Upload-Metadata must name the workspace');
    enforcePermission('objects', principal, undefined, named);
    return named;
  },
};

/**
 * Embed sessions (the widget's publish surface): the session's workspace, always. Naming another
 * in Upload-Metadata is refused (403), like a widget naming one in a body.
 */
const WIDGET_UPLOADS: UploadDoor = {
  base: '/v1/embed/uploads',
  permission: 'embedPublish',
  workspaceOf(principal, named) {
    enforcePermission('embedPublish', principal, undefined, named);
    const workspace = principal.workspaceId;
    if (!workspace) throw errors.forbidden('this embed session has no workspace');
    return workspace;
  },
};

export const UPLOAD_DOORS = [API_UPLOADS, WIDGET_UPLOADS];
