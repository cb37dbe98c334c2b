/** Sandbox controls (INTERFACE §9): only registered when PAYMENTS_SANDBOX=1; operator key as Bearer. */
import { LATEST_SERVICE_TIME_MS, type ServiceClock } from '../../clock.js';
import { fieldError } from '../../shared/errors.js';
import { defineRoute, fieldErrorExample, type RouteDef } from '../../shared/route.js';
import { ClockResponse, MoveClockBody } from './sandbox.schemas.js';

export const SANDBOX_PREFIX = '/sandbox/v1';

export function sandboxClockRoutes(clock: ServiceClock): RouteDef[] {
  const common = { auth: 'sandbox' as const, tags: ['Sandbox'], root: true };
  return [
    defineRoute({
      ...common,
      method: 'GET',
      url: `${SANDBOX_PREFIX}/clock`,
      summary: 'Read the service clock',
      description:
        'Sandbox only (operator key): the service clock that every scheduled thing follows — billing charges, retries, deadlines, ' +
        'session expiry, settlement dates, token expiry.',
      schema: { response: { 200: ClockResponse } },
      handler: async () => {
        await clock.refresh();
        return { now: clock.nowIso() };
      },
    }),
    defineRoute({
      ...common,
      method: 'POST',
      url: `${SANDBOX_PREFIX}/clock`,
      summary: 'Move the service clock',
      description:
        'Sandbox only (operator key): moves the service clock forward by `advanceSeconds`, or to `now`; never backwards (422). ' +
        'What fell due runs promptly: billing charges and their retries, session expiry, the daily settlement run. Access tokens ' +
        'expire on this clock too — use an API key in tests that move it.',
      errorExamples: { 422: [fieldErrorExample('The clock would move backwards', 'now', 'date', 'the service clock never moves backwards')] },
      schema: { body: MoveClockBody, response: { 200: ClockResponse } },
      handler: async ({ body }) => {
        await clock.refresh();
        const field = 'advanceSeconds' in body ? 'advanceSeconds' : 'now';
        const target = 'advanceSeconds' in body ? clock.now() + body.advanceSeconds * 1000 : Date.parse(body.now);
        if (target < clock.now() - 1000) throw fieldError('now', 'date', 'the service clock never moves backwards');
        if (target > LATEST_SERVICE_TIME_MS) {
          const latest = new Date(LATEST_SERVICE_TIME_MS).toISOString();
          throw field === 'now'
            ? fieldError('now', 'date', `must be before ${latest}`)
            : fieldError(field, `max:${Math.floor((LATEST_SERVICE_TIME_MS - clock.now()) / 1000)}`, `would move the service clock past ${latest}`);
        }
        await clock.moveTo(target);
        return { now: clock.nowIso() };
      },
    }),
  ];
}
