/** pino JSON logs; credentials and card fields are redacted wherever they appear. */
import pino, { type Logger } from 'pino';
import type { BusinessEventName, EventsLog } from './shared/events-log.js';

/**
 * A second line of defence: nothing should log these, but a field of one of these names is
 * censored at the top level and one level down (pino's `*` is one level).
 */
const SENSITIVE_FIELDS = [
  'authorization',
  'Authorization',
  'accessToken',
  'key',
  'secret',
  'operatorKey',
  'webhookAuthentication',
  'card',
  'cardNumber',
  'number',
  'pan',
  'cvc',
  'cvv',
];

export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'headers.authorization',
  ...SENSITIVE_FIELDS,
  ...SENSITIVE_FIELDS.map((field) => `*.${field}`),
  // One level down only: a top-level `apiKey` is the key's record, whose `key` is censored and whose name stays.
  '*.apiKey',
];

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      base: { service: 'payments' },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    destination,
  );
}

/** Events that need the operator: warn rather than info. */
const WARNING_EVENTS: ReadonlySet<BusinessEventName> = new Set(['job.dead']);

/** Business events as lines: `{"level":30,"event":"payment.answered","transactionId":…,"msg":"payment.answered"}`. */
export function pinoEventsLog(logger: Logger): EventsLog {
  return {
    logEvent(event, fields) {
      logger[WARNING_EVENTS.has(event) ? 'warn' : 'info']({ event, ...fields } as Record<string, unknown>, event);
    },
  };
}
