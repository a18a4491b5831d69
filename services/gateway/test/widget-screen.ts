import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { AccountView, MessageView, PostView } from '@svc/contracts/public';
import type { Frame, Page } from 'playwright-core';
import { expect } from 'vitest';

/**
 * What the widget's browser tests look at in a partner page (see widget-host.ts): the widget's
 * frame, the events it sent, and each screen checked at 320 px: screenshotted into
 * test-artifacts/widget/, no wider than its frame, and without axe-core violations.
 */
const ARTIFACTS = fileURLToPath(new URL('../../../test-artifacts/widget/', import.meta.url));
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface WidgetEvent {
  name: string;
  at: number;
  data: { account: AccountView; message: MessageView; post: PostView };
}

export const widgetEvents = (page: Page) =>
  page.evaluate(() => (globalThis as unknown as { widgetEvents: WidgetEvent[] }).widgetEvents);

/** Waits until the widget sent `name`; answers every such event so far. */
export async function waitForEvent(page: Page, name: string, timeout = 10_000): Promise<WidgetEvent[]> {
  await page.waitForFunction(
    (n) => (globalThis as unknown as { widgetEvents: WidgetEvent[] }).widgetEvents.some((e) => e.name === n),
    name,
    { timeout },
  );
  return (await widgetEvents(page)).filter((e) => e.name === name);
}

export function appFrame(page: Page): Frame {
  const frame = page.frames().find((f) => f.url().includes('/embed/app'));
  if (!frame) throw new Error('the widget frame is not there');
  return frame;
}

/** Screenshot the partner page, check the app does not overflow 320 px, and run axe-core in the frame. */
export async function checkScreen(page: Page, name: string) {
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: `${ARTIFACTS}${name}.png`, fullPage: true });
  const frame = appFrame(page);
  const overflow = await frame.evaluate<number>(
    'document.documentElement.scrollWidth - document.documentElement.clientWidth',
  );
  expect(overflow, `${name}: wider than its frame`).toBeLessThanOrEqual(0);
  // The app's CSP allows only its own script: axe runs through the DevTools protocol instead.
  await frame.evaluate(AXE_SOURCE);
  const violations = await frame.evaluate(async () => {
    const { axe } = globalThis as unknown as {
      axe: { run(o: object): Promise<{ violations: { id: string; nodes: { html: string }[] }[] }> };
    };
    const result = await axe.run({ resultTypes: ['violations'] });
    return result.violations.map((v) => ({ id: v.id, nodes: v.nodes.map((n) => n.html) }));
  });
  expect(violations, `${name}: axe violations`).toEqual([]);
}
