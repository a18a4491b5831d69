import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import multipart from '@fastify/multipart';
import { errors, ServiceError } from '@svc/errors';
import { ConcurrencySlots } from '@svc/ops';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { grpcCaller, type Principal } from '../auth/principal.ts';
import type { PublishingClient } from '../clients.ts';
import { COMPLETING_DEADLINE_MS, sendParts } from './upload-parts.ts';

/** What an upload may cost the gateway: its size, and how many pass through at once. */
export interface UploadLimits {
  /** Images (MEDIA_MAX_BYTES); publishing holds an image to it once its first bytes show one. */
  maxBytes: number;
  /** Any file (MEDIA_VIDEO_MAX_BYTES). */
  videoMaxBytes: number;
  perPartner: number;
  total: number;
}

/** What a form holds besides its file: two short fields, the parts' headers and boundaries. */
const FORM_OVERHEAD_BYTES = 16 * 1024;

/** A form's file as it went to publishing: its upload there, its length and digest. */
interface ReceivedFile {
  caller: { partnerId: string; workspaceId: string };
  uploadId: string;
  size: number;
  sha256: string;
  /** The media was made: nothing to clean up. */
  made: boolean;
}

/**
 * Multipart uploads (`POST /v1/media` and the widget's): the form is read in a preValidation hook,
 * the `workspace` field first, which becomes the body (validated like the JSON one); the `file`
 * part then streams to publishing as the parts of an upload (1 MiB held here at most, whatever
 * its size), with its digest for the Idempotency-Key comparison. The operation's `run` completes
 * the upload, which makes the media; a request that ends otherwise (a refusal, a replayed key, a
 * client gone) deletes it. Each form holds a slot until answered (at most `perPartner` per partner
 * and `total` per gateway process: 429 beyond). Any other part, a second file or a malformed
 * form is a 400, never a 5xx.
 */
export class FormUploads {
  private readonly files = new WeakMap<FastifyRequest, ReceivedFile>();
  private readonly held = new WeakMap<FastifyRequest, () => void>();
  private readonly slots: ConcurrencySlots;

  constructor(
    private readonly publishing: PublishingClient,
    private readonly limits: UploadLimits,
  ) {
    this.slots = new ConcurrencySlots({
      what: 'media uploads',
      perKey: limits.perPartner,
      total: limits.total,
      retryAfterSeconds: 1,
    });
  }

  /** The upload route's own Fastify setup: multipart parsing and the hooks above. */
  readonly scope = async (instance: FastifyInstance): Promise<void> => {
    const finish = (request: FastifyRequest) => this.finish(request);
    instance.addHook('onResponse', finish);
    instance.addHook('onRequestAbort', finish);
    await instance.register(multipart, {
      limits: {
        fileSize: this.limits.videoMaxBytes,
        files: 1,
        fields: 2,
        parts: 3,
        fieldSize: 1024,
        fieldNameSize: 100,
        headerPairs: 20,
      },
      throwFileSizeLimit: true,
      // The field name decides, not the client's filename or Content-Type.
      isPartAFile: (name, _contentType, filename) => name === 'file' || filename !== undefined,
    });
    instance.addHook('preValidation', async (request) => {
      if (!request.isMultipart()) return;
      // A form declaring more than the largest file can hold is refused before anything is read.
      if (Number(request.headers['content-length']) > this.limits.videoMaxBytes + FORM_OVERHEAD_BYTES)
        throw errors.fileTooLarge('file', this.limits.videoMaxBytes);
      this.held.set(request, this.slots.claim(request.principal?.partnerId ?? ''));
      try {
        request.body = await this.readForm(request);
      } catch (error) {
        throw formError(error, this.limits.videoMaxBytes);
      }
    });
  };

  /** The request's file as it went to publishing (its digest is the Idempotency-Key's fingerprint). */
  received(request: FastifyRequest): ReceivedFile | undefined {
    return this.files.get(request);
  }

  /** The media the request's file becomes (its public JSON): the upload's last, empty part. */
  async complete(request: FastifyRequest): Promise<string> {
    const file = this.files.get(request);
    if (!file) throw errors.validation('file', 'the multipart field "file" is required');
    const { upload } = await this.publishing.appendUpload(
      { caller: file.caller, uploadId: file.uploadId, offset: BigInt(file.size), last: true },
      { deadlineMs: COMPLETING_DEADLINE_MS },
    );
    file.made = true;
    if (!upload?.mediaJson) throw new ServiceError('internal_error', 'the upload made no media');
    return upload.mediaJson;
  }

  /** The form's fields; its file streams to publishing as it is read. */
  private async readForm(request: FastifyRequest): Promise<Record<string, string>> {
    const fields: Record<string, string> = {};
    for await (const part of request.parts()) {
      if (part.fieldname !== 'file' && part.fieldname !== 'workspace')
        throw errors.validation(
          part.fieldname,
          `unknown field "${part.fieldname}": send the fields workspace and file`,
        );
      if (part.type === 'file') {
        if (part.fieldname !== 'file')
          throw errors.validation(part.fieldname, `${part.fieldname} must be a text field`);
        await this.receiveFile(request, workspaceOf(request.principal, fields), part);
      } else {
        if (part.fieldname === 'file')
          throw errors.validation('file', 'file must be a file part (with a filename), not a text field');
        if (part.valueTruncated) throw errors.validation(part.fieldname, `${part.fieldname} is too long`);
        fields[part.fieldname] = String(part.value);
      }
    }
    return fields;
  }

  private async receiveFile(
    request: FastifyRequest,
    workspaceId: string,
    part: { filename?: string; file: Readable & { truncated?: boolean } },
  ): Promise<void> {
    const caller = callerOf(request.principal);
    const { upload } = await this.publishing.startUpload({
      caller,
      workspaceId,
      filename: part.filename ?? '',
    });
    const file = { caller, uploadId: upload?.id ?? '', size: 0, sha256: '', made: false };
    this.files.set(request, file);
    const digest = createHash('sha256');
    const target = { caller, uploadId: file.uploadId, offset: 0, length: null };
    const sent = await sendParts(this.publishing, target, checkedFile(part.file), {
      seen: (chunk) => digest.update(chunk),
    });
    file.size = sent.offset;
    file.sha256 = digest.digest('hex');
  }

  /** The slot goes back; a file that made no media (refused, replayed, abandoned) is deleted. */
  private async finish(request: FastifyRequest): Promise<void> {
    this.held.get(request)?.();
    const file = this.files.get(request);
    if (!file || file.made) return;
    file.made = true;
    await this.publishing.deleteUpload({ caller: file.caller, uploadId: file.uploadId }).catch(() => {});
  }
}

function callerOf(principal: Principal | undefined) {
  if (!principal) throw errors.unauthorized();
  return grpcCaller(principal);
}

/** The widget's session names its workspace; a key's form names it before the file. */
function workspaceOf(principal: Principal | undefined, fields: Record<string, string>): string {
  if (principal?.kind === 'embed' && principal.workspaceId) return principal.workspaceId;
  if (!fields.workspace)
    throw errors.validation('workspace', 'workspace is required, as a field sent before the file');
  return fields.workspace;
}

/** The file part's bytes; past the size limit busboy truncates it, which is a refusal here. */
async function* checkedFile(file: Readable & { truncated?: boolean }): AsyncGenerator<Uint8Array> {
  for await (const chunk of file) {
    if (file.truncated) throw Object.assign(new Error('file too large'), { code: 'FST_REQ_FILE_TOO_LARGE' });
    yield chunk as Uint8Array;
  }
  if (file.truncated) throw Object.assign(new Error('file too large'), { code: 'FST_REQ_FILE_TOO_LARGE' });
}

/** A multipart problem as the 400 the partner can act on. */
function formError(error: unknown, maxBytes: number): ServiceError {
  if (error instanceof ServiceError) return error;
  const code = (error as { code?: string }).code;
  if (code === 'FST_REQ_FILE_TOO_LARGE') return errors.fileTooLarge('file', maxBytes);
  if (code === 'FST_FILES_LIMIT') return errors.validation('file', 'send exactly one file');
  if (code === 'FST_PARTS_LIMIT' || code === 'FST_FIELDS_LIMIT')
    return errors.validation('body', 'too many form fields: send only workspace and file');
  if (code === 'FST_PROTO_VIOLATION') return errors.validation('body', 'forbidden form field name');
  const message = (error as { message?: string }).message ?? 'unreadable';
  return errors.validation('body', `malformed multipart/form-data body: ${message}`);
}
