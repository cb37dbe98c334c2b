/** pino JSON logs; credentials and card fields are redacted wherever they appear. */
import pino, { type Logger } from 'pino';

export const REDACT_PATHS = [
  'req.headers.authorization',
  'headers.authorization',
  '*.authorization',
  '*.Authorization',
  '*.accessToken',
  '*.key',
  '*.secret',
  '*.webhookAuthentication',
  '*.card',
  '*.number',
  '*.pan',
  '*.cvc',
  'card',
  'number',
  'cvc',
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
