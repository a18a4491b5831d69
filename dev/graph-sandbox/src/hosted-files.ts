import { sniffContainer } from '@svc/media-probe';
import type { FastifyInstance } from 'fastify';
import { ControlError } from './control-errors.ts';
import type { World } from './world.ts';

/**
 * Files the business sends through the Send API: Meta downloads the URL it is given and serves
 * the file from its own CDN from then on (the echo's `payload.url` and `GET /{message-id}` name
 * that copy, not the URL that was sent, which may expire). The sandbox keeps the bytes it
 * downloaded and serves them at `/__sandbox/cdn/{attachment-id}/{name}`.
 */
export function hostFile(world: World, file: { id: string; name: string; mimeType: string; bytes: Buffer }) {
  world.store.hostedFiles.set(file.id, { bytes: file.bytes, mimeType: file.mimeType });
  return `${world.config.publicUrl}/__sandbox/cdn/${file.id}/${encodeURIComponent(file.name)}`;
}

/**
 * A video uploaded as bytes (resumable uploads, multipart `source`) has no URL of its own: Meta
 * serves its copy, and so does the sandbox, named by the id of what it belongs to.
 */
export function hostVideo(world: World, id: string, bytes: Buffer): string {
  const mov = sniffContainer(bytes.subarray(0, 64)) === 'mov';
  const name = `${id}.${mov ? 'mov' : 'mp4'}`;
  return hostFile(world, { id, name, mimeType: mov ? 'video/quicktime' : 'video/mp4', bytes });
}

export function registerHostedFiles(app: FastifyInstance, world: World): void {
  app.get<{ Params: { id: string; name: string } }>('/__sandbox/cdn/:id/:name', (req, reply) => {
    const file = world.store.hostedFiles.get(req.params.id);
    if (!file) throw new ControlError(404, 'file not found');
    return reply.type(file.mimeType).send(file.bytes);
  });
}
