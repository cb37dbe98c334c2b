import { Type } from '@sinclair/typebox';
import { Attributes, Currency, Nullable, PositiveAmount, StringEnum, Url, Uuid } from '../../shared/wire.js';
import { CardInputSchema } from '../payment-methods/payment-methods.schemas.js';
import { VIRTUAL_TERMINAL_CARDS, type VirtualTerminalCard } from './sandbox-cards.js';

export const SALE_TYPES = ['PAYMENT', 'PAYOUT'] as const;

/** Physical sale request (INTERFACE §7). */
export const SaleBody = Type.Object({
  terminal: Type.Optional(
    Nullable(
      Type.Object(
        {
          id: Type.Optional(Nullable(Uuid)),
        },
        { description: 'Omit (or omit id) to use the fallback terminal of the point of sale.' },
      ),
    ),
  ),
  transaction: Type.Object({
    pointOfSaleId: Uuid,
    amount: PositiveAmount,
    currency: Currency,
    type: Type.Optional(
      StringEnum(SALE_TYPES, {
        description: 'PAYMENT (default): the customer pays. PAYOUT: funds go to the tapped card — the only refund of a physical sale.',
      }),
    ),
    notificationUrl: Type.Optional(Nullable(Url)),
    reference: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 255 }))),
    attributes: Type.Optional(Nullable(Attributes)),
    customerId: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 255 }))),
  }),
});

export const TapParams = Type.Object({ terminalId: Uuid });
export const TapBody = Type.Object({ card: CardInputSchema });

export const PageTapBody = Type.Object({ card: StringEnum(Object.keys(VIRTUAL_TERMINAL_CARDS) as VirtualTerminalCard[]) });

export const TerminalStatusResponse = Type.Object({
  message: Type.String({ description: 'What the terminal screen shows.' }),
  terminal: Type.Object({ id: Uuid, name: Nullable(Type.String()) }),
  sale: Nullable(
    Type.Object({
      transactionId: Type.String(),
      type: Type.String(),
      state: Type.String(),
      stage: Type.String(),
      amount: Type.Integer(),
      currency: Type.String(),
      displayAmount: Type.String(),
      reference: Nullable(Type.String()),
    }),
  ),
});
