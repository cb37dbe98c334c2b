/**
 * The hosted payment window: server-rendered, accessible HTML (no build step, no client script
 * needed), plus the small script a merchant page uses to embed it. Pure functions from view
 * models to text; every value is HTML-escaped. Amounts are formatted from minor units with
 * string arithmetic only (never a float).
 */
import { toDecimalString } from '../shared/money.js';

export const escapeHtml = (value: string): string =>
  value.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** 123456 DKK → "1,234.56 DKK"; 1500 JPY → "1,500 JPY". */
export function formatAmount(minor: number, currency: string): string {
  const [whole, fraction] = toDecimalString(minor, currency).split('.');
  const grouped = whole!.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return `${grouped}${fraction === undefined ? '' : `.${fraction}`} ${currency}`;
}

/** Customer-facing text for a declined attempt: what happened and what to do, no internal codes. */
export function declineMessage(errorCode: string | null): string {
  switch (errorCode) {
    case 'INSUFFICIENT_FUNDS':
      return 'The payment was declined because there are not enough funds on the card. Please use another card.';
    case 'CARD_EXPIRED':
      return 'The card has expired. Please use another card.';
    case 'CARD_LOST_OR_STOLEN':
    case 'CARD_CLOSED':
    case 'MISSING_ACQUIRER_AGREEMENT':
    case 'CARD_BLOCKED':
    case 'CARD_RESTRICTED':
    case 'SUSPECTED_FRAUD':
      return 'The card cannot be used for this payment. Please use another card or contact your bank.';
    case 'INVALID_CARD_NUMBER':
    case 'INVALID_CVC':
      return 'The card details were not accepted. Please check them and try again.';
    case 'REJECTED_BY_SCA':
    case 'SCA_EXPIRED':
    case 'SCA_CANCELLED_BY_USER':
    case 'SCA_REQUIRED':
      return 'The card holder verification did not succeed. Please try again.';
    case 'ACQUIRER_DOWN':
    case 'ISSUER_DOWN':
    case 'ACQUIRER_TIMEOUT':
    case 'SYSTEM_ERROR':
      return 'The payment could not be processed right now. Please try again in a moment.';
    case 'EXPIRED':
      return 'The time for this payment has run out.';
    case 'MANUAL_ABORTED':
      return 'The shop has cancelled this payment. No money has been taken.';
    case 'REJECTED_BY_MERCHANT':
      return 'The shop did not accept this payment. No money has been taken. Please try again or contact the shop.';
    case 'AGE_VERIFICATION_NOT_COMPLETED':
      return 'Your age could not be verified, so the purchase cannot be completed. No money has been taken.';
    default:
      return 'The payment was declined by the card issuer. Please use another card.';
  }
}

export interface WindowView {
  merchant: string;
  amount: number;
  currency: string;
  /** Form action (the page's own URL). */
  action: string;
  attemptsLeft: number;
  /** Message of the last declined attempt, shown above the form. */
  decline: string | null;
  /** Field errors of the submitted form (field → message). */
  fieldErrors: Partial<Record<CardField, string>>;
  /** Values to put back into the form after an error (never the card number or CVC). */
  values: { expiryMonth?: string | undefined; expiryYear?: string | undefined; holderName?: string | undefined; amount?: string | undefined };
  /** What the customer pays for (a session started by a multi-link), shown as text. */
  orderLines?: ReadonlyArray<OrderLineView> | null;
  /** The customer enters the amount (`amount` is the default); the field shows it in major units. */
  dynamicAmount?: boolean;
  /** Whether the card form is shown (allowedPaymentMethods), and the wallets offered as buttons. */
  card?: boolean;
  wallets?: ReadonlyArray<string>;
}

/** Wallet button labels (paymentMethodType → name). */
export const WALLET_LABELS: Record<string, string> = {
  VIPPS_MOBILEPAY: 'Vipps MobilePay',
  MOBILEPAY_ONLINE: 'MobilePay',
  APPLE_PAY: 'Apple Pay',
  GOOGLE_PAY: 'Google Pay',
  SWISH: 'Swish',
  VIABILL: 'ViaBill',
  ANYDAY: 'Anyday',
  KLARNA: 'Klarna',
};

export interface OrderLineView {
  description: string;
  quantity: number;
  unitPrice: number;
  totalAmount: number;
  type: string;
}

/** Order line types that reduce what is paid: shown with a minus sign. */
const DEDUCTION_TYPES = new Set(['DISCOUNT', 'GIFT_CARD', 'STORE_CREDIT']);

/** The order lines as an accessible list of text (merchant text is escaped, never markup). */
export function orderLinesList(lines: ReadonlyArray<OrderLineView>, currency: string): string {
  const items = lines.map((line) => {
    const total = `${DEDUCTION_TYPES.has(line.type) ? '−' : ''}${formatAmount(line.totalAmount, currency)}`;
    return `<li><span class="line-text">${escapeHtml(`${line.quantity} × ${line.description}`)}</span> <span class="line-total">${escapeHtml(total)}</span></li>`;
  });
  return `<section aria-labelledby="order-title"><h2 id="order-title" class="order-title">Your order</h2><ul class="order-lines">${items.join('')}</ul></section>`;
}

export type CardField = 'number' | 'expiryMonth' | 'expiryYear' | 'cvc' | 'holderName' | 'amount' | 'paymentMethodType';

const FIELD_LABELS: Record<CardField, string> = {
  number: 'Card number',
  expiryMonth: 'Expiry month',
  expiryYear: 'Expiry year',
  cvc: 'Security code (CVC)',
  holderName: 'Name on card',
  amount: 'Amount',
  paymentMethodType: 'Payment method',
};

const STYLE = `
  *{box-sizing:border-box}
  body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1a1a1a;background:#f4f5f7}
  main{max-width:28rem;margin:2rem auto;padding:1.5rem;background:#fff;border-radius:8px;box-shadow:0 1px 3px rgba(0,0,0,.15)}
  h1{font-size:1.25rem;margin:0 0 .25rem}
  .amount{font-size:1.5rem;font-weight:700;margin:0 0 1.25rem}
  label,legend{display:block;font-weight:600;margin:.75rem 0 .25rem}
  fieldset{border:0;padding:0;margin:0}
  .row{display:flex;gap:.75rem}
  .row>div{flex:1}
  input{width:100%;padding:.6rem;font:inherit;border:2px solid #6b6b6b;border-radius:4px}
  input:focus{outline:3px solid #1a5fb4;outline-offset:1px}
  input[aria-invalid=true]{border-color:#b00020}
  .field-error{color:#b00020;margin:.25rem 0 0;font-size:.95rem}
  .alert{border:2px solid #b00020;background:#fdecee;padding:.75rem 1rem;border-radius:4px;margin:0 0 1rem}
  .alert h2{font-size:1rem;margin:0 0 .25rem}
  .ok{border-color:#1e7b34;background:#e8f5eb}
  button,.button{display:inline-block;margin-top:1.25rem;width:100%;padding:.8rem;font:inherit;font-weight:700;color:#fff;background:#1a5fb4;border:0;border-radius:4px;text-align:center;text-decoration:none;cursor:pointer}
  button:focus,.button:focus{outline:3px solid #000;outline-offset:2px}
  button.secondary{color:#1a5fb4;background:#fff;border:2px solid #1a5fb4}
  .wallets{margin-top:1.25rem}
  button.wallet{margin-top:.5rem;background:#1a1a1a}
  .hint{color:#4a4a4a;font-size:.9rem;margin:.5rem 0 0}
  .order-title{font-size:1rem;margin:0 0 .25rem}
  .order-lines{list-style:none;padding:0;margin:0 0 1.25rem;border-top:1px solid #d0d0d0}
  .order-lines li{display:flex;justify-content:space-between;gap:1rem;padding:.35rem 0;border-bottom:1px solid #d0d0d0;overflow-wrap:anywhere}
  .line-total{white-space:nowrap}
  .visually-hidden{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
`;

/** A window page; `script`: inline code allowed by the page's CSP nonce (3-D Secure steps). */
export function page(title: string, body: string, refreshSeconds?: number, script?: { nonce: string; code: string }): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
${refreshSeconds ? `<meta http-equiv="refresh" content="${refreshSeconds}">` : ''}
<meta name="robots" content="noindex">
<title>${escapeHtml(title)}</title>
<style>${STYLE}</style>
</head>
<body>
<main aria-labelledby="merchant">
${body}
</main>
${script ? `<script nonce="${escapeHtml(script.nonce)}">${script.code}</script>` : ''}
</body>
</html>
`;
}

/** `amount` -1: the customer enters it (dynamicAmount). */
function header(merchant: string, amount: number, currency: string): string {
  const text =
    amount === -1
      ? `Enter the amount to pay in ${escapeHtml(currency)}`
      : amount === 0
        ? 'Save your card for later payments'
        : `<span class="visually-hidden">Amount to pay: </span>${escapeHtml(formatAmount(amount, currency))}`;
  return `<h1 id="merchant">${escapeHtml(merchant)}</h1>
<p class="amount">${text}</p>`;
}

function input(field: CardField, view: WindowView, attributes: string, value = '', label: string = FIELD_LABELS[field]): string {
  const id = `card-${field}`;
  const error = view.fieldErrors[field];
  const described = error ? ` aria-invalid="true" aria-describedby="${id}-error"` : '';
  return `<label for="${id}">${escapeHtml(label)}</label>
<input id="${id}" name="${field}" ${attributes}${described} value="${escapeHtml(value)}">
${error ? `<p class="field-error" id="${id}-error">${escapeHtml(error)}</p>` : ''}`;
}

/** The card form, with the last decline or the field errors on top (announced to screen readers). */
export function paymentForm(view: WindowView): string {
  const errors = Object.entries(view.fieldErrors) as Array<[CardField, string]>;
  const summary = errors.length
    ? `<div class="alert" role="alert" tabindex="-1"><h2>Please correct the card details</h2><ul>${errors
        .map(([field, message]) => `<li><a href="#card-${field}">${FIELD_LABELS[field]}: ${escapeHtml(message)}</a></li>`)
        .join('')}</ul></div>`
    : view.decline
      ? `<div class="alert" role="alert" tabindex="-1"><h2>The payment did not go through</h2><p>${escapeHtml(view.decline)}</p></div>`
      : '';
  const dynamic = view.dynamicAmount === true;
  const verb = dynamic ? 'Pay' : view.amount === 0 ? 'Save card' : `Pay ${formatAmount(view.amount, view.currency)}`;
  const attempts = view.attemptsLeft === 1 ? 'This is your last attempt.' : `You have ${view.attemptsLeft} attempts.`;
  const card = view.card !== false;
  const wallets = view.wallets ?? [];
  const amountField = dynamic
    ? input(
        'amount',
        view,
        'type="text" inputmode="decimal" required maxlength="16" autocomplete="transaction-amount"',
        view.values.amount ?? (view.amount > 0 ? toDecimalString(view.amount, view.currency) : ''),
        `Amount (${view.currency})`,
      )
    : '';
  const walletButtons = wallets.length
    ? `<fieldset class="wallets"><legend>${card ? 'Or pay with' : 'Pay with'}</legend>${wallets
        .map(
          (w) =>
            `<button type="submit" class="wallet" name="paymentMethodType" value="${escapeHtml(w)}">${escapeHtml(`Pay with ${WALLET_LABELS[w] ?? w}`)}</button>`,
        )
        .join('')}</fieldset>`
    : '';
  const cardFields = card
    ? `${input('number', view, 'type="text" inputmode="numeric" autocomplete="cc-number" required maxlength="23" spellcheck="false"')}
<fieldset>
<legend>Expiry date</legend>
<div class="row">
<div>${input('expiryMonth', view, 'type="text" inputmode="numeric" autocomplete="cc-exp-month" required maxlength="2" placeholder="MM"', view.values.expiryMonth ?? '')}</div>
<div>${input('expiryYear', view, 'type="text" inputmode="numeric" autocomplete="cc-exp-year" required maxlength="4" placeholder="YYYY"', view.values.expiryYear ?? '')}</div>
</div>
</fieldset>
${input('cvc', view, 'type="text" inputmode="numeric" autocomplete="cc-csc" required maxlength="4"')}
${input('holderName', view, 'type="text" autocomplete="cc-name" maxlength="128"', view.values.holderName ?? '')}
<button type="submit" name="paymentMethodType" value="CARD">${escapeHtml(verb)}</button>`
    : '';
  return page(
    `${dynamic ? 'Pay' : view.amount === 0 ? 'Save card' : `Pay ${formatAmount(view.amount, view.currency)}`} – ${view.merchant}`,
    `${dynamic ? header(view.merchant, -1, view.currency) : header(view.merchant, view.amount, view.currency)}
${view.orderLines?.length ? orderLinesList(view.orderLines, view.currency) : ''}
${summary}
<form method="post" action="${escapeHtml(view.action)}" novalidate>
${amountField}
${cardFields}
${walletButtons}
${card || wallets.length ? `<p class="hint">${attempts}${card ? ' Your card number is sent securely and never shown to the shop.' : ''}</p>` : '<p>No payment method is available for this payment. Please contact the shop.</p>'}
</form>`,
  );
}

export interface AgeView {
  merchant: string;
  amount: number;
  currency: string;
  /** The age step's form action. */
  action: string;
  minimumAge: number;
  attemptsLeft: number;
  /** Why the last attempt failed, or the field error of the date of birth. */
  decline: string | null;
  fieldError: string | null;
}

/**
 * The age step before the payment form (ageVerification). The sandbox stands in for the national
 * eID: the customer gives a date of birth; "I cannot verify my age" ends the attempt as not verified.
 */
export function ageStep(view: AgeView): string {
  const alert = view.decline
    ? `<div class="alert" role="alert" tabindex="-1"><h2>The payment did not go through</h2><p>${escapeHtml(view.decline)}</p></div>`
    : '';
  const described = view.fieldError ? ' aria-invalid="true" aria-describedby="dateOfBirth-error"' : '';
  return page(
    `Verify your age – ${view.merchant}`,
    `${header(view.merchant, view.amount, view.currency)}
${alert}
<form method="post" action="${escapeHtml(view.action)}" novalidate>
<h2 class="order-title">Verify your age</h2>
<p>You must be at least ${view.minimumAge} years old to make this purchase. Verify your age with your eID before you pay.</p>
<label for="dateOfBirth">Date of birth (sandbox eID)</label>
<input id="dateOfBirth" name="dateOfBirth" type="date" autocomplete="bday" required${described}>
${view.fieldError ? `<p class="field-error" id="dateOfBirth-error">${escapeHtml(view.fieldError)}</p>` : ''}
<button type="submit" name="verify" value="1">Verify age</button>
<button type="submit" name="verify" value="0" class="secondary">I cannot verify my age</button>
<p class="hint">${view.attemptsLeft === 1 ? 'This is your last attempt.' : `You have ${view.attemptsLeft} attempts.`}</p>
</form>`,
  );
}

export interface StatusView {
  merchant: string;
  amount: number;
  currency: string;
  /** Where the customer goes next (successUrl / failureUrl), when the shop gave one. */
  next: string | null;
  message: string | null;
}

export function paymentDone(view: StatusView): string {
  return page(
    `Payment complete – ${view.merchant}`,
    `${header(view.merchant, view.amount, view.currency)}
<div class="alert ok" role="status"><h2>${view.amount === 0 ? 'Your card is saved' : 'Thank you, the payment is complete'}</h2></div>
${view.next ? `<a class="button" href="${escapeHtml(view.next)}">Return to ${escapeHtml(view.merchant)}</a>` : '<p>You can close this window.</p>'}`,
  );
}

export function paymentFailed(view: StatusView): string {
  return page(
    `Payment not completed – ${view.merchant}`,
    `${header(view.merchant, view.amount, view.currency)}
<div class="alert" role="alert"><h2>The payment was not completed</h2><p>${escapeHtml(view.message ?? 'No money has been taken.')}</p></div>
${view.next ? `<a class="button" href="${escapeHtml(view.next)}">Return to ${escapeHtml(view.merchant)}</a>` : '<p>You can close this window.</p>'}`,
  );
}

export function paymentProcessing(view: StatusView): string {
  return page(
    `Processing payment – ${view.merchant}`,
    `${header(view.merchant, view.amount, view.currency)}
<div class="alert ok" role="status"><h2>Your payment is being processed</h2><p>This page updates by itself. Please do not pay again.</p></div>`,
    3,
  );
}

export function notFoundPage(): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Payment not found</title><style>${STYLE}</style></head>
<body><main aria-labelledby="t"><h1 id="t">Payment not found</h1><p>This payment link is not valid. Please return to the shop and start again.</p></main></body></html>
`;
}

/**
 * The embed script (`javascript` of POST /cit): `PaymentWindow.open({key, container})` puts the
 * payment window in an iframe; a <script data-key="…" data-container="#id"> tag opens it by itself.
 */
export function checkoutScript(baseUrl: string): string {
  return `/* Payment window embed script. Usage: PaymentWindow.open({ key: "<session key>", container: "#checkout" }) */
(function () {
  'use strict';
  var BASE = ${JSON.stringify(baseUrl.replace(/\/$/, ''))};
  var current = document.currentScript;
  function open(options) {
    options = options || {};
    var key = options.key || (current && current.getAttribute('data-key'));
    if (!key) throw new Error('PaymentWindow.open: a session key is required');
    var container = options.container || (current && current.getAttribute('data-container')) || document.body;
    if (typeof container === 'string') container = document.querySelector(container);
    var frame = document.createElement('iframe');
    frame.src = BASE + '/pay/' + encodeURIComponent(key);
    frame.title = options.title || 'Payment window';
    frame.style.width = '100%';
    frame.style.minHeight = '640px';
    frame.style.border = '0';
    frame.setAttribute('allow', 'payment');
    container.appendChild(frame);
    return frame;
  }
  window.PaymentWindow = { open: open };
  if (current && current.getAttribute('data-key')) {
    if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', function () { open({}); });
    else open({});
  }
})();
`;
}
