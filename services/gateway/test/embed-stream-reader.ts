/** One Server-Sent Event as a client parses it. */
interface StreamEvent {
  event: string;
  id?: string;
  data: string;
}

/**
 * Reads `GET /v1/embed/stream` the way the widget does: fetch() with the Authorization header
 * (the token never in the URL), parsing the body into events as they arrive.
 */
export async function openStream(baseUrl: string, token: string) {
  const controller = new AbortController();
  const response = await fetch(`${baseUrl}/v1/embed/stream`, {
    headers: { authorization: `Bearer ${token}` },
    signal: controller.signal,
  });
  const events: StreamEvent[] = [];
  const comments: string[] = [];
  let ended = false;
  const reading = (async () => {
    if (!response.body) return;
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of response.body) {
        buffer += decoder.decode(chunk as Uint8Array, { stream: true });
        let end = buffer.indexOf('\n\n');
        while (end >= 0) {
          parseFrame(buffer.slice(0, end), events, comments);
          buffer = buffer.slice(end + 2);
          end = buffer.indexOf('\n\n');
        }
      }
    } catch {
      // aborted by close()
    }
    ended = true;
  })();
  return {
    response,
    events,
    comments,
    get ended() {
      return ended;
    },
    ofType: (type: string) => events.filter((e) => e.event === type).map((e) => JSON.parse(e.data)),
    async close() {
      controller.abort();
      await reading;
    },
  };
}

function parseFrame(frame: string, events: StreamEvent[], comments: string[]): void {
  const event: StreamEvent = { event: 'message', data: '' };
  let hasData = false;
  for (const line of frame.split('\n')) {
    if (line.startsWith(':')) comments.push(line.slice(1).trim());
    else if (line.startsWith('event: ')) event.event = line.slice(7);
    else if (line.startsWith('id: ')) event.id = line.slice(4);
    else if (line.startsWith('data: ')) {
      event.data += line.slice(6);
      hasData = true;
    }
  }
  if (hasData) events.push(event);
}
