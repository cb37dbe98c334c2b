/** Wire schemas of capture, refund, void and renew (seed §2.3, INTERFACE §3 and §7). */
import { Type } from '@sinclair/typebox';
import { MAX_AMOUNT } from '../../shared/money.js';
import { Nullable, PositiveAmount, StringEnum } from '../../shared/wire.js';
import { OPERATION_STATES } from '../transactions/transaction.js';

export const CaptureBody = Type.Object({
  amount: PositiveAmount,
  voidRemaining: Type.Optional(Type.Boolean({ description: 'Void the uncaptured rest right after a successful capture.' })),
});

export const RefundBody = Type.Object({ amount: PositiveAmount });

export const VoidBody = Type.Object({
  amount: Type.Integer({ minimum: -1, maximum: MAX_AMOUNT, description: 'Minor units, at least 1; -1 voids the whole remaining authorization.' }),
});

export const OperationResponse = Type.Object({
  operationId: Nullable(Type.String({ format: 'uuid', description: 'The recorded operation; null only when nothing was recorded (a refusal).' })),
  success: Type.Boolean(),
  state: Nullable(StringEnum(OPERATION_STATES, { description: 'SUCCESS, FAILED, or PROCESSING while the acquirer has not answered.' })),
  errorCode: Nullable(Type.Object({ code: Type.String(), message: Type.String() })),
});

export const RefundResponse = Type.Object({
  success: Type.Boolean({ description: 'True when every refund operation succeeded.' }),
  operations: Type.Array(OperationResponse, { description: 'One per refunded capture, newest capture first; a refusal is one entry with operationId null.' }),
});
