/** Wire schemas of capture, refund, void and renew (seed §2.3, INTERFACE §3 and §7). */
import { Type } from '@sinclair/typebox';
import { MAX_AMOUNT } from '../../shared/money.js';
import { Nullable, PositiveAmount, StringEnum } from '../../shared/wire.js';
import { OPERATION_STATES } from '../transactions/transaction.js';
import { IN_DOUBT_ERROR } from './lifecycle.js';

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

/** The shape of every operation answer (capture, void, renew, and each refund part). */
export const OperationResponse = Type.Object({
  operationId: Nullable(Type.String({ format: 'uuid', description: 'The recorded operation; null only when nothing was recorded (a refusal).' })),
  success: Type.Boolean(),
  state: Nullable(StringEnum(OPERATION_STATES, { description: 'SUCCESS, FAILED, or PROCESSING while the acquirer has not answered.' })),
  errorCode: Nullable(Type.Object({ code: Type.String(), message: Type.String() })),
});

const succeeded = (operationId: string) => ({ operationId, success: true, state: 'SUCCESS', errorCode: null });
const refused = (code: string, message: string, operationId: string | null = null) => ({
  operationId,
  success: false,
  state: 'FAILED',
  errorCode: { code, message },
});

/** The answer of capture, void and renew (seed §2.3); each route shows its own outcomes. */
const operationResponse = (examples: unknown[]) => Type.Object(OperationResponse.properties, { examples });

export const CaptureResponse = operationResponse([
  succeeded('33243f5a-8a82-4465-8c5a-29206c6fd795'),
  refused('DECLINED_BY_ISSUER_OR_SCHEME', 'Declined by the issuer or the card scheme.', '6a0e5d0c-3b8f-4f0e-9d57-0c2f3b9e41a7'),
  refused('AMOUNT_EXCEEDS_REMAINING', 'The amount exceeds the remaining authorization (700 available).'),
  {
    operationId: '9f4b2c1d-6e3a-4b8f-a0d2-5c7e9b1f3a64',
    success: false,
    state: 'PROCESSING',
    errorCode: IN_DOUBT_ERROR,
  },
]);

export const VoidResponse = operationResponse([
  succeeded('0b7c3d0e-9a51-4d8e-8f4e-5b2a6c1d9e30'),
  refused('INVALID_STATE', 'Cannot void a transaction in state CAPTURED: nothing is left uncaptured.'),
]);

export const RenewResponse = operationResponse([
  succeeded('c2f81e4a-7d3b-4a6f-9e15-8b0d2a4c6f73'),
  { operationId: 'c2f81e4a-7d3b-4a6f-9e15-8b0d2a4c6f73', success: true, state: 'PROCESSING', errorCode: null },
  refused('NOT_SUPPORTED_FOR_PAYMENT_METHOD', 'Renew is supported only for KLARNA and VIABILL, not for CARD.'),
]);

export const RefundResponse = Type.Object(
  {
    success: Type.Boolean({ description: 'True when every refund operation succeeded.' }),
    operations: Type.Array(OperationResponse, { description: 'One per refunded capture, newest capture first; a refusal is one entry with operationId null.' }),
  },
  {
    examples: [
      { success: true, operations: [succeeded('94e91ade-27ad-4b1a-adbb-0c59444ffe0e')] },
      { success: true, operations: [succeeded('94e91ade-27ad-4b1a-adbb-0c59444ffe0e'), succeeded('5d1f7a2c-0e64-4b8a-9c3d-7f2e1a6b8c45')] },
      { success: false, operations: [refused('AMOUNT_EXCEEDS_REMAINING', 'The amount exceeds the captured amount not yet refunded (1500 available).')] },
    ],
  },
);
