import { Type } from '@sinclair/typebox';
import { DateTime } from '../../shared/wire.js';

export const ClockResponse = Type.Object({ now: DateTime }, { examples: [{ now: '2026-11-26T13:29:05.000Z' }] });
export const MoveClockBody = Type.Union(
  [Type.Object({ advanceSeconds: Type.Integer({ minimum: 0, maximum: 100 * 365 * 86400 }) }), Type.Object({ now: DateTime })],
  { examples: [{ advanceSeconds: 86400 }, { now: '2030-01-01T00:00:00.000Z' }] },
);
