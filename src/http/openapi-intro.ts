/**
 * The introduction of the API reference: the OpenAPI `info.description` (Markdown), the first
 * thing /docs shows. The tables are built from the code they describe (the error catalogue, the
 * rate-limit rules, the sandbox card table), so the page cannot drift from the service.
 */
import { type Outcome, TEST_CARDS } from '../connectors/simulator/test-cards.js';
import { ERROR_CATALOGUE, OPERATION_ERROR_CODES } from '../shared/errors.js';
import type { RateLimitCategory } from '../shared/route.js';
import { DEFAULT_RULES, describeRate, RATE_LIMITED } from './rate-limit.js';

function outcomeText(outcome: Outcome): string {
  if (outcome.kind === 'approve') return 'approved';
  if (outcome.kind === 'timeout') return `\`ACQUIRER_TIMEOUT\` on the first ${outcome.attempts === 1 ? 'try' : `${outcome.attempts} tries`}, then approved`;
  return `declined \`${outcome.errorCode}\``;
}

function cardOutcome(card: (typeof TEST_CARDS)[string]): string {
  const parts: string[] = [];
  if (card.outcomes.authorize) parts.push(`payment ${outcomeText(card.outcomes.authorize)}`);
  if (card.authorizeBy?.MIT) parts.push(`every later MIT ${outcomeText(card.authorizeBy.MIT)}`);
  if (card.outcomes.capture) parts.push(`capture ${outcomeText(card.outcomes.capture)}`);
  if (card.outcomes.payout) parts.push(`payout ${outcomeText(card.outcomes.payout)}`);
  if (card.scaChallenge)
    parts.push(`3-D Secure challenge (scaMode NORMAL or FORCE) that ${card.scaChallenge === 'pass' ? 'passes' : 'fails: `REJECTED_BY_SCA`'}`);
  return parts.length ? parts.join('; ') : 'approved';
}

const table = (head: string[], rows: string[][]): string =>
  [`| ${head.join(' | ')} |`, `| ${head.map(() => '---').join(' | ')} |`, ...rows.map((row) => `| ${row.join(' | ')} |`)].join('\n');

export function openApiIntroduction(): string {
  const rateRows = (Object.keys(RATE_LIMITED) as RateLimitCategory[]).map((category) => [
    RATE_LIMITED[category],
    `${describeRate(DEFAULT_RULES[category])}, burst ${DEFAULT_RULES[category].burst}`,
  ]);
  const cardRows = Object.entries(TEST_CARDS).map(([number, card]) => [`\`${number}\``, card.brand, cardOutcome(card)]);
  const errorRows = Object.entries(ERROR_CATALOGUE).map(([code, { status, message }]) => [`\`${code}\``, String(status), message]);

  return `Card payments over one JSON API: customer-initiated sessions with a hosted payment window (CIT),
merchant-initiated payments (MIT, single and batch), MOTO, terminal sales, payouts, the lifecycle of a
payment (capture, void, refund, renew), payment links, subscriptions and billing agreements, webhooks and
settlements. Money is always an **integer in minor units** (\`1250\` EUR is €12.50; JPY has no minor unit),
currencies are ISO 4217 codes, and an absent optional value is \`null\`, never omitted.

## Authentication

Every endpoint takes \`Authorization: Bearer <credential>\`. There are two tiers:

- **Merchant** (security scheme \`merchant\`): a merchant API key (\`sk_…\`, from \`POST /management/api-keys\`;
  the sandbox merchant's key is printed at start) or an 8-hour access token
  (\`POST /partner/accounts/{accountId}/access-token\`). Everything except the partner and sandbox routes.
- **Operator** (security scheme \`operator\`): the deployment's operator key (\`op_…\`), for the partner
  tier (\`/public/api/v1/partner/…\`: merchant accounts, access tokens, capabilities) and the sandbox
  controls (\`/sandbox/v1/…\`).

No or unknown credential: 401 \`UNAUTHORIZED\`. A credential of the other tier: 403 \`FORBIDDEN\`. MOTO and
synchronous payouts need a capability the operator grants: 403 \`CAPABILITY_NOT_ENABLED\` without it.
Another merchant's resource is always 404 \`NOT_FOUND\`, never its data.

## Idempotency

Requests that create something or move money accept an \`Idempotency-Key\` header (1–255 printable ASCII).
The first completed response (status and body) is stored for 24 hours: a retry with the same key and the
same body gets it again, with \`Idempotent-Replayed: true\`, and does nothing else. The key is scoped to the
merchant, the method and the route. The same key with another body is 422 \`IDEMPOTENCY_KEY_REUSED\`; the
same key while the first request still runs is 409 \`IDEMPOTENCY_KEY_IN_USE\`. A request refused before it
executes (401, 403, 429, 422 validation) stores nothing: fix it and retry with the same key.

## Pagination

- **Cursor pages** (transactions, settlement transfers and their transactions): \`?perPage=&offset=\`;
  the envelope is \`{currentOffset, nextOffset, perPage, hasMore, items}\`. Pass \`nextOffset\` as \`offset\`
  until \`hasMore\` is false (\`nextOffset\` is then \`null\`). Newest first, each row exactly once.
- **Numbered pages** (every other list): \`?page=&perPage=\`; the envelope has \`page, perPage, lastPage,
  total, from, to\`, the page URLs (\`firstPageUrl\`, \`nextPageUrl\`, …, \`null\` at the ends) and \`items\`.

\`perPage\` is 1–500, 25 by default. A page past the last is an empty \`items\`.

## Callbacks and webhooks

When a payment reaches a final state, its **callback** is POSTed to the request's \`notificationUrl\` with
the point of sale's \`webhookAuthentication\` value as the literal \`Authorization\` header (check it: it is
your proof the call comes from this service), \`Content-Type: application/json\` and \`X-Delivery-Id\`
(stable across retries). Any 2xx counts as delivered; otherwise it is retried (25 attempts over about
40 hours). The body is the transaction with its aggregates, operations, session, subscription, SCA result and
masked card. \`GET /transactions/{transactionId}/notifications\` shows every attempt.
\`notificationUrl\` must be on the point of sale's approved domain.

**Registered webhooks** (\`POST /webhooks\`) get \`{event, data}\` for events such as
\`transaction.success.v1\` or \`subscription-billing.charge-failed.v1\`, with the webhook's secret as the
\`Authorization\` header. A webhook failing more than half of its deliveries over 7 days is paused.

## Rate limits

Per merchant, token buckets. A refused request gets 429 \`RATE_LIMIT_REACHED\` with \`Retry-After\` (s),
\`X-RateLimit-Limit\`, \`X-RateLimit-Remaining\` and \`X-RateLimit-Reset\` (unix s); the \`X-RateLimit-*\`
headers come with every response of a limited endpoint.

${table(['endpoint', 'limit'], rateRows)}

MIT ingestion is also capped per merchant for the deployment as a whole: by default 300 transactions a
minute through \`POST /mit\` and 30,000 batch entries a minute through \`POST /mit/batch\` (429 as above;
nothing is created).

\`Retry-After\` is a promise: after that many seconds the same request passes every limit that applies
(a MIT route's bucket and the ingestion cap alike), so a client that waits as told is not refused again
unless other requests used the room first. The \`X-RateLimit-*\` headers of a 429 describe the limit that
gave that wait.

## Sandbox test cards

In the sandbox the simulated acquirer answers by card number (any future expiry, any CVC); every other
valid card number is approved. Complete a hosted payment window with \`POST /sandbox/v1/sessions/{sessionId}/complete\`,
tap a card on a terminal with \`POST /sandbox/v1/terminals/{terminalId}/tap\`, move time with \`POST /sandbox/v1/clock\`.

${table(['card number', 'brand', 'outcome'], cardRows)}

## Errors

Every refused request answers \`{"success": false, "errorCode": "…", "message": "…"}\` (schema
\`ErrorBody\`); a 422 \`VALIDATION_ERROR\` adds \`errors\`, field path → \`["[rule]: text"]\`
(schema \`ValidationErrorBody\`), with the rules \`required\`, \`int\`, \`string\`, \`boolean\`, \`uuid\`,
\`date\`, \`url\`, \`in:A,B\`, \`min:<n>\`, \`max:<n>\`, \`regex\`, \`array\`. A 503 comes with \`Retry-After\`.

${table(['errorCode', 'HTTP status', 'meaning'], errorRows)}

A declined payment is not an HTTP error: the transaction is created and its \`errorCode\` says why. A
refused capture, void, refund or renew is HTTP 200 with \`success: false\` and \`errorCode: {code, message}\`
(${OPERATION_ERROR_CODES.map((code) => `\`${code}\``).join(', ')}, …). The full list is in the
repository's \`docs/errors.md\`.
`;
}
