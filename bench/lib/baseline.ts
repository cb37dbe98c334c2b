/**
 * The baseline every figure is compared with: a bare Fastify server whose route does what any
 * route of the service must do anyway — the same bearer-credential lookup and the same TypeBox
 * schema validation (and response serialisation) — and then answers a fixed payload. The gap
 * between a figure and this is what the endpoint itself costs.
 */
import Fastify, { type FastifySchema } from 'fastify';
import type { Principal } from '../../src/modules/accounts/account.js';
import { isKnownCurrency } from '../../src/shared/currencies.js';

export interface BaselineRoute {
  method: 'GET' | 'POST';
  url: string;
  schema: FastifySchema;
  payload: unknown;
}

export interface BaselineServer {
  url: string;
  close(): Promise<void>;
}

export async function startBaseline(options: { routes: BaselineRoute[]; authenticate(secret: string): Promise<Principal | null> }): Promise<BaselineServer> {
  const app = Fastify({
    logger: false,
    // The ajv options and formats of src/http/app.ts, so that validation costs the same.
    ajv: {
      customOptions: { allErrors: true, coerceTypes: 'array', useDefaults: true, removeAdditional: true },
      onCreate: (ajv) => {
        (ajv as unknown as { addFormat(name: string, format: { type: 'string'; validate: (value: string) => boolean }): unknown }).addFormat('iso4217', {
          type: 'string',
          validate: isKnownCurrency,
        });
      },
    },
  });
  for (const route of options.routes) {
    app.route({
      method: route.method,
      url: route.url,
      schema: route.schema,
      onRequest: async (request, reply) => {
        const match = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '');
        const principal = match ? await options.authenticate(match[1]!) : null;
        if (principal?.tier !== 'merchant') return reply.code(401).send({ success: false, errorCode: 'UNAUTHORIZED', message: 'Unauthorized.' });
      },
      handler: async () => route.payload,
    });
  }
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  if (!address || typeof address === 'string') throw new Error('no TCP address');
  return { url: `http://127.0.0.1:${address.port}`, close: () => app.close() };
}
