import { createHash } from 'node:crypto';
import { type Bus, currentHeaders, type MetaWebhook, SUBJECTS } from '@svc/bus';
import { errors, ServiceError } from '@svc/errors';
import { answerVerificationChallenge, verifyWebhookSignature } from '@svc/graph-client';
import type { FastifyInstance } from 'fastify';
import type { AccountsClient } from '../clients.ts';

/**
 * What Meta calls on us: the webhook endpoint (GET subscription handshake, POST events) and the
 * deauthorize callback. A POST is verified with X-Hub-Signature-256 over the raw bytes, put on a
 * durable JetStream subject as received, and only then answered 200: once Meta has its 200 the
 * payload is safe with NATS, and consumers (inbox, accounts) work from there. Unsigned calls get
 * 401, forged ones 403, and neither changes anything.
 */
export interface MetaWebhookDeps {
  bus: Bus;
  accounts: AccountsClient;
  appSecret: string;
  verifyToken: string;
}

/**
 * Meta waits about 5 s for our answer (facts §5.3). A publish made while the NATS connection is
 * down or going down (a server restart) is dropped by the client, never sent: core NATS is at most
 * once, and only JetStream's ack says a message is kept. And while a cluster elects a new leader
 * for the stream (a node lost), nobody answers for a second or more. One 5 s wait would spend
 * Meta's whole budget on such a lost request, so the gateway tries in short attempts instead, sent
 * again (same message id, so JetStream keeps one copy) until 4 s have passed; after that it
 * answers 503 in time, and Meta sends the event again later.
 */
const PUBLISH_BUDGET_MS = 4_000;
const ATTEMPT_TIMEOUT_MS = 1_200;
const RETRY_PAUSE_MS = 250;

async function publishWithinBudget(bus: Bus, payload: string, msgID: string): Promise<void> {
  const deadline = Date.now() + PUBLISH_BUDGET_MS;
  for (;;) {
    const timeout = Math.max(100, Math.min(ATTEMPT_TIMEOUT_MS, deadline - Date.now()));
    try {
      // The request id and trace context travel with it, as through an outbox.
      const headers = currentHeaders();
      await bus.js.publish(bus.subjects.subject(SUBJECTS.metaWebhook.name), payload, {
        msgID,
        timeout,
        headers,
      });
      return;
    } catch (error) {
      if (Date.now() + RETRY_PAUSE_MS >= deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, RETRY_PAUSE_MS));
    }
  }
}

export function metaWebhookRoutes(deps: MetaWebhookDeps) {
  return async (scope: FastifyInstance) => {
    // Raw bytes: the signature covers Meta's exact encoding, which re-serializing would change.
    scope.removeContentTypeParser('application/json');
    scope.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) =>
      done(null, body),
    );
    scope.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string' },
      (_request, body, done) => done(null, new URLSearchParams(String(body))),
    );

    scope.get('/webhooks/meta', async (request, reply) => {
      const answer = answerVerificationChallenge(request.query as Record<string, unknown>, deps.verifyToken);
      return reply.code(answer.status).type('text/plain; charset=utf-8').send(answer.body);
    });

    scope.post('/webhooks/meta', async (request, reply) => {
      const raw = request.body;
      if (!Buffer.isBuffer(raw)) throw errors.validation('body', 'expected a JSON body');
      const signature = request.headers['x-hub-signature-256'];
      if (typeof signature !== 'string') throw errors.unauthorized('missing X-Hub-Signature-256');
      if (!verifyWebhookSignature(raw, signature, deps.appSecret))
        throw errors.forbidden('X-Hub-Signature-256 does not match the body');
      const payload: MetaWebhook = { received_at: new Date().toISOString(), body: raw.toString('utf8') };
      try {
        // The message id de-duplicates Meta's identical retries within JetStream's window.
        const msgID = createHash('sha256').update(raw).digest('hex');
        await publishWithinBudget(deps.bus, JSON.stringify(payload), msgID);
      } catch (error) {
        // Not accepted: Meta retries on a non-2xx, so nothing is lost.
        throw new ServiceError('service_unavailable', 'the event bus is not answering; retry', {
          cause: error,
        });
      }
      return reply.code(200).type('text/plain; charset=utf-8').send('EVENT_RECEIVED');
    });

    scope.post('/webhooks/meta/deauthorize', async (request, reply) => {
      const form = request.body instanceof URLSearchParams ? request.body : new URLSearchParams();
      const signedRequest = form.get('signed_request');
      if (!signedRequest) throw errors.unauthorized('missing signed_request');
      try {
        const { accountsRevoked } = await deps.accounts.deauthorize({ signedRequest });
        return reply.code(200).send({ accounts_revoked: accountsRevoked });
      } catch (error) {
        if (error instanceof ServiceError && error.code === 'unauthorized')
          throw errors.forbidden('signed_request does not verify');
        throw error;
      }
    });
  };
}
