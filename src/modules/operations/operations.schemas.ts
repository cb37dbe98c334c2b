/** Wire schemas of capture, refund, void and renew (seed §2.3, INTERFACE §3 and §7). */
import { Type } from '@sinclair/typebox';
import { MAX_AMOUNT } from '../../shared/money.js';
import { Nullable, PositiveAmount, StringEnum } from '../../shared/wire.js';
import { OPERATION_STATES } from '../transactions/transaction.js';

export const CaptureBody = Type.Object(
  {
    amount: PositiveAmount,
    voidRemaining: Type.Optional(Type.Boolean({ description: 'Void the uncaptured rest right after a successful capture.' })),
  },
  { examples: [{ amount: 2500 }, { amount: 1800, voidRemaining: true }] },
);

export const RefundBody = Type.Object({ amount: PositiveAmount }, { examples: [{ amount: 1000 }] });

export const VoidBody = Type.Object(
  { amount: Type.Integer({ minimum: -1, maximum: MAX_AMOUNT, description: 'Minor units, at least 1; -1 voids the whole remaining authorization.' }) },
  { examples: [{ amount: -1 }, { amount: 500 }] },
);

/** A capture that went through, and a renew refused without reaching the acquirer (HTTP 200 all the same). */
const OPERATION_EXAMPLES = [
  { operationId: '33243f5a-8a82-4465-8c5a-29206c6fd795', success: true, state: 'SUCCESS', errorCode: null },
  {
    operationId: null,
    success: false,
    state: 'FAILED',
    errorCode: { code: 'NOT_SUPPORTED_FOR_PAYMENT_METHOD', message: 'Renew is supported only for KLARNA and VIABILL, not for CARD.' },
  },
];

export const OperationResponse = Type.Object(
  {
    operationId: Nullable(Type.String({ format: 'uuid', description: 'The recorded operation; null only when nothing was recorded (a refusal).' })),
    success: Type.Boolean(),
    state: Nullable(StringEnum(OPERATION_STATES, { description: 'SUCCESS, FAILED, or PROCESSING while the acquirer has not answered.' })),
    errorCode: Nullable(Type.Object({ code: Type.String(), message: Type.String() })),
  },
  { examples: OPERATION_EXAMPLES },
);

export const RefundResponse = Type.Object(
  {
    success: Type.Boolean({ description: 'True when every refund operation succeeded.' }),
    operations: Type.Array(OperationResponse, { description: 'One per refunded capture, newest capture first; a refusal is one entry with operationId null.' }),
  },
  { examples: [{ success: true, operations: [{ operationId: '94e91ade-27ad-4b1a-adbb-0c59444ffe0e', success: true, state: 'SUCCESS', errorCode: null }] }] },
);
