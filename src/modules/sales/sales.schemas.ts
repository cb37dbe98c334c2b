import { Type } from '@sinclair/typebox';
import { Attributes, Currency, Nullable, PositiveAmount, StringEnum, Url, Uuid } from '../../shared/wire.js';
import { CardInputSchema } from '../payment-methods/payment-methods.schemas.js';
import { TransactionResponse, transactionExample } from '../transactions/transactions.schemas.js';
import { VIRTUAL_TERMINAL_CARDS, type VirtualTerminalCard } from './sandbox-cards.js';

export const SALE_TYPES = ['PAYMENT', 'PAYOUT'] as const;

/** A merchant reference (INTERFACE §11.2: `/cit`, `/payment-links`, `/multi-links` and `/sale`). */
export const SaleReference = Type.String({ pattern: '^[A-Za-z0-9-]{1,36}$', description: '1–36 letters, digits and hyphens.' });

/** Largest switchBackTimeout (ms): what a 32-bit terminal timer holds (about 24.8 days). */
export const MAX_SWITCH_BACK_TIMEOUT_MS = 2_147_483_647;

/** The terminal request of a sale (INTERFACE §11.6): stored with the sale and shown by the sandbox terminal. */
export const SaleTerminal = Type.Object(
  {
    id: Type.Optional(Nullable(Uuid)),
    suppressAppNotifications: Type.Optional(
      Type.Boolean({ description: 'The terminal app shows no notifications of its own during the sale. Default false.' }),
    ),
    switchBackTimeout: Type.Optional(
      Nullable(
        Type.Integer({
          minimum: 0,
          maximum: MAX_SWITCH_BACK_TIMEOUT_MS,
          description: 'Milliseconds after the sale before the terminal switches back to activityToResume; null: the app default.',
        }),
      ),
    ),
    activityToResume: Type.Optional(Nullable(Type.String({ maxLength: 255, description: 'The app activity the terminal returns to after the sale.' }))),
    surcharge: Type.Optional(Nullable(Type.Boolean({ description: "Offer the card surcharge; null: the terminal's setting." }))),
    dcc: Type.Optional(Nullable(Type.Boolean({ description: "Offer dynamic currency conversion; null: the terminal's setting." }))),
  },
  { description: 'Omit (or omit id) to use the fallback terminal of the point of sale.' },
);

/** Physical sale request (INTERFACE §7, §11.6). */
export const SaleBody = Type.Object(
  {
    terminal: Type.Optional(Nullable(SaleTerminal)),
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
      reference: Type.Optional(Nullable(SaleReference)),
      attributes: Type.Optional(Nullable(Attributes)),
      customerId: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 255 }))),
    }),
  },
  {
    examples: [
      {
        terminal: { id: 'caf3cf7a-b952-491a-9534-481373c19cbc' },
        transaction: {
          pointOfSaleId: '710fe949-df64-4f3c-9c7f-e16153a026a9',
          amount: 1850,
          currency: 'EUR',
          reference: 'till-1-0042',
          notificationUrl: 'https://shop.example.com/payments/callback',
        },
      },
    ],
  },
);

/** A card terminal sale: PENDING on the terminal until the customer taps (sandbox: POST /sandbox/v1/terminals/{terminalId}/tap). */
const SALE_TRANSACTION_EXAMPLE = transactionExample({
  id: 'FHANAWJFW5W',
  subscriptionId: null,
  state: 'PENDING',
  externalStatusCodes: null,
  createdAt: '2026-11-25T13:29:05.537Z',
  sessionId: null,
  paymentMethodId: null,
  paymentMethodType: null,
  paymentMethodSubType: null,
  paymentMethodExpiry: null,
  paymentMethodDisplayText: null,
  paymentMethodHolderName: null,
  customerId: null,
  amount: 1850,
  instantCapture: 'VOID',
  pointOfSaleId: '710fe949-df64-4f3c-9c7f-e16153a026a9',
  reference: 'till-1-0042',
  exemptions: null,
  clientIp: null,
  terminalId: 'caf3cf7a-b952-491a-9534-481373c19cbc',
});

export const SaleResponse = Type.Object(TransactionResponse.properties, { examples: [{ transaction: SALE_TRANSACTION_EXAMPLE }] });

/** The sale once the customer tapped the sandbox Mastercard 5555555555554444. */
export const TapResponse = Type.Object(TransactionResponse.properties, {
  examples: [
    {
      transaction: {
        ...SALE_TRANSACTION_EXAMPLE,
        state: 'SUCCESS',
        externalStatusCodes: { terminal: null, acquirer: '00', network: '00', sca: null },
        paymentMethodId: 'bcc3f776-9035-4ea6-81ac-e9a1c33fc9f0',
        paymentMethodType: 'CARD',
        paymentMethodSubType: 'Mastercard',
        paymentMethodExpiry: '2030-12-31',
        paymentMethodDisplayText: '55555555XXXX4444',
        paymentMethodHolderName: 'Test Holder',
      },
    },
  ],
});

export const TapParams = Type.Object({ terminalId: Uuid });
export const TapBody = Type.Object(
  { card: CardInputSchema },
  { examples: [{ card: { number: '5555555555554444', expiryMonth: 12, expiryYear: 2030, cvc: '123', holderName: 'Test Holder' } }] },
);

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
      request: Type.Object(
        {
          suppressAppNotifications: Type.Boolean(),
          switchBackTimeout: Nullable(Type.Integer()),
          activityToResume: Nullable(Type.String()),
          surcharge: Nullable(Type.Boolean()),
          dcc: Nullable(Type.Boolean()),
        },
        { description: 'The terminal request of the sale (POST /sale terminal.*).' },
      ),
    }),
  ),
});
