// What every phase of bench:publish works with: the system's addresses, the partner, the clients
// and each post's body (its workspace's two accounts and a JPEG of its own).
import type { DirectCalls, GatewayClient, SettlementWatch } from './clients.ts';
import type { Fixture } from './fixtures.ts';
import { run } from './settings.ts';

export interface PostBody {
  workspace: string;
  caption: string;
  media: string[];
  targets: string[];
}

export interface RunContext {
  gatewayUrl: string;
  sandboxUrl: string;
  publishingUrl: string;
  /** The ops `/metrics` of the gateway and of publishing's API. */
  gatewayMetricsUrl: string;
  publishingMetricsUrl: string;
  /** The partner's key and id. */
  key: string;
  partnerId: string;
  /** Each child process's pid and label. */
  processes: Map<number, string>;
  gateway: GatewayClient;
  watcher: SettlementWatch;
  direct: DirectCalls;
  fixtureOf(index: number): Fixture;
  postBody(index: number, label: string): PostBody;
}

/** Post `index` of a phase: caption `Bench <label> <run> #<index>`, the media uploaded for it. */
export function postBodies(fixtures: Fixture[], mediaOf: Map<string, string[]>) {
  const fixtureOf = (i: number) => fixtures[i % fixtures.length] as Fixture;
  const postBody = (i: number, label: string): PostBody => {
    const f = fixtureOf(i);
    const media = mediaOf.get(label)?.[i];
    if (!media) throw new Error(`no media uploaded for ${label} #${i}`);
    return {
      workspace: f.workspace,
      caption: `Bench ${label} ${run} #${i}`,
      media: [media],
      targets: [f.ig.id, f.page.id],
    };
  };
  return { fixtureOf, postBody };
}
