/** Sandbox controls (INTERFACE §9): only registered when PAYMENTS_SANDBOX=1; operator key as Bearer. */
import type { ServiceClock } from '../../clock.js';
import { fieldError } from '../../shared/errors.js';
import { defineRoute, type RouteDef } from '../../shared/route.js';
import { ClockResponse, MoveClockBody } from './sandbox.schemas.js';

export const SANDBOX_PREFIX = '/sandbox/v1';

export function sandboxClockRoutes(clock: ServiceClock): RouteDef[] {
  const common = { auth: 'sandbox' as const, tags: ['Sandbox'], root: true };
  return [
    defineRoute({
      ...common, method: 'GET', url: `${SANDBOX_PREFIX}/clock`, summary: 'Read the service clock',
      schema: { response: { 200: ClockResponse } },
      handler: async () => {
        await clock.refresh();
        return { now: clock.nowIso() };
      },
    }),
    defineRoute({
      ...common, method: 'POST', url: `${SANDBOX_PREFIX}/clock`, summary: 'Move the service clock forward (never backwards)',
      schema: { body: MoveClockBody, response: { 200: ClockResponse } },
      handler: async ({ body }) => {
        await clock.refresh();
        if ('advanceSeconds' in body) {
          await clock.advance(body.advanceSeconds);
        } else {
          const target = Date.parse(body.now);
          if (target < clock.now() - 1000) throw fieldError('now', 'date', 'the service clock never moves backwards');
          await clock.moveTo(target);
        }
        return { now: clock.nowIso() };
      },
    }),
  ];
}
