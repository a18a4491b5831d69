import { readFileSync } from 'node:fs';
import { type ConnectionOptions, credsAuthenticator } from '@nats-io/nats-core';

type Env = Record<string, string | undefined>;

/** How a client proves who it is to NATS: connection options, none in development. */
export type NatsCredentials = Pick<ConnectionOptions, 'user' | 'pass' | 'token' | 'authenticator'>;

/**
 * The NATS credentials in the environment, as connection options. Production gives each service a
 * user of its own, limited to the subjects it publishes and consumes (deploy/k8s/nats); a local or
 * development server takes anyone, so none is needed there. One of: `NATS_CREDS_FILE` (a `.creds`
 * file, a user JWT with its seed), `NATS_USER` with `NATS_PASSWORD`, or `NATS_TOKEN`. The config
 * schema (`baseConfigSchema`) declares them; they are read here so that every caller of
 * `connectBus`, services and scripts alike, authenticates the same way.
 */
export function natsCredentials(env: Env): NatsCredentials {
  const { NATS_CREDS_FILE: file, NATS_USER: user, NATS_PASSWORD: pass, NATS_TOKEN: token } = env;
  if (Boolean(user) !== Boolean(pass)) throw new Error('NATS_USER and NATS_PASSWORD are set together');
  if ([file, user, token].filter(Boolean).length > 1)
    throw new Error('set one of NATS_CREDS_FILE, NATS_USER with NATS_PASSWORD, or NATS_TOKEN');
  if (file) return { authenticator: credsAuthenticator(readFileSync(file)) };
  if (user) return { user, pass };
  if (token) return { token };
  return {};
}

/**
 * Replies (JetStream API answers, pulled messages) come to the client's inbox subjects. With
 * credentials, each service uses inboxes of its own (`_INBOX_<name>.…`) and may subscribe to those
 * only, so that no service can read the replies, hence the messages, meant for another.
 */
export function inboxPrefixFor(name: string, credentials: NatsCredentials): string | undefined {
  return Object.keys(credentials).length > 0 ? `_INBOX_${name}` : undefined;
}
