/**
 * The sandbox's virtual terminal page (`/sandbox/terminals/{id}`) taps test cards by name, so that
 * the page never carries a card number. Sandbox only: the numbers are the simulator's test cards.
 */
export const VIRTUAL_TERMINAL_CARDS = {
  VISA: { number: '4111111111111111', label: 'Visa — approved' },
  MASTERCARD: { number: '5555555555554444', label: 'Mastercard — approved' },
  DECLINED: { number: '4000000000000002', label: 'Visa — declined by issuer' },
  INSUFFICIENT_FUNDS: { number: '4000000000009995', label: 'Visa — insufficient funds' },
  EXPIRED: { number: '4000000000000069', label: 'Visa — card expired' },
} as const;

export type VirtualTerminalCard = keyof typeof VIRTUAL_TERMINAL_CARDS;
