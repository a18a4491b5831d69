import { mediaView } from '@svc/contracts/public';
import type { ServiceClients } from '../../clients.ts';
import { jsonText } from '../../http/json-text.ts';
import { createMedia, mediaBody } from '../../routes/media.ts';
import { type AnyTool, defineTool } from '../tool.ts';

/** Media by URL (an agent has no file to upload): the JSON form of `POST /v1/media`. */
export function mediaTools(clients: ServiceClients): AnyTool[] {
  return [
    defineTool({
      name: 'create_media_from_url',
      title: 'Add an image from a URL',
      description:
        "Fetch a JPEG, PNG or WebP image from an http(s) URL into this workspace's media library; answers the media record (id, mime, width, height) to use in create_post.",
      input: mediaBody.omit({ workspace: true }).required({ url: true }),
      output: mediaView,
      async run({ caller, args }) {
        const { mediaJson } = await createMedia(clients.publishing, caller.scoped, caller.workspaceId, {
          url: args.url,
        });
        return jsonText(mediaJson);
      },
    }),
  ];
}
