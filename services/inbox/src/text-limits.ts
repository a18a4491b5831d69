import { errors } from '@svc/errors';

/**
 * The networks' text limits (facts §4.3, §4.7), checked before anything is sent so a partner gets a
 * 400 naming the field instead of the network's refusal: Instagram DMs under 1,000 bytes of UTF-8,
 * Messenger up to 2,000 characters, comments up to 2,200 (Instagram) or 8,000 (Pages).
 */
export function checkText(text: string, network: string, kind: 'dm' | 'comment'): void {
  if (text.trim() === '') throw errors.validation('text', 'text must not be empty');
  const chars = [...text].length;
  if (kind === 'dm' && network === 'photo_network' && Buffer.byteLength(text) >= 1000)
    throw errors.validation('text', 'a photo_network direct message must be under 1,000 bytes of UTF-8');
  if (kind === 'dm' && network === 'page_network' && chars > 2000)
    throw errors.validation('text', 'a page_network direct message takes at most 2,000 characters');
  const commentMax = network === 'photo_network' ? 2200 : 8000;
  if (kind === 'comment' && chars > commentMax)
    throw errors.validation(
      'text',
      `a ${network} comment takes at most ${commentMax.toLocaleString('en')} characters`,
    );
}
