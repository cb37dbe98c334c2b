import { Type } from '@sinclair/typebox';
import { DateTime } from '../../shared/wire.js';

export const ClockResponse = Type.Object({ now: DateTime });
export const MoveClockBody = Type.Union([
  Type.Object({ advanceSeconds: Type.Integer({ minimum: 0, maximum: 100 * 365 * 86400 }) }),
  Type.Object({ now: DateTime }),
]);
