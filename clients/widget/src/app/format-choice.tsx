import type { PostFormat } from '@svc/contracts/public';

export type { PostFormat };

const FORMATS: { id: PostFormat; name: string }[] = [
  { id: 'feed', name: 'Feed' },
  { id: 'reel', name: 'Reel' },
  { id: 'story', name: 'Story' },
];

const HINTS: Record<PostFormat, string> = {
  feed: 'A post, photo or carousel on the profile or Page.',
  reel: 'One vertical video of 3 s to 15 min.',
  story: 'One image or a video of up to 60 s, shown for a day; no caption.',
};

/**
 * What every target is published as (the post's `format`): a radio group, Feed by default; a
 * Reel also says whether it shows in the feed.
 */
export function FormatChoice(props: {
  format: PostFormat;
  shareToFeed: boolean;
  onFormat(format: PostFormat): void;
  onShareToFeed(on: boolean): void;
}) {
  return (
    <fieldset aria-describedby="format-hint">
      <legend>Publish as</legend>
      <div class="formats">
        {FORMATS.map((f) => (
          <label class="choice" key={f.id}>
            <input
              type="radio"
              name="format"
              value={f.id}
              checked={props.format === f.id}
              onChange={() => props.onFormat(f.id)}
            />
            <span>{f.name}</span>
          </label>
        ))}
      </div>
      <p id="format-hint" class="muted">
        {HINTS[props.format]}
      </p>
      {props.format === 'reel' && (
        <label class="choice">
          <input
            type="checkbox"
            checked={props.shareToFeed}
            onChange={(e) => props.onShareToFeed((e.target as HTMLInputElement).checked)}
          />
          <span>Share to feed</span>
        </label>
      )}
    </fieldset>
  );
}
