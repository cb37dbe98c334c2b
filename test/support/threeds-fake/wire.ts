/**
 * The 3DS fake's wire layer: what every answer looks like and the encodings both sides use, from
 * shared/acquirers/3dsecure-io.md only. JSON answers (§2.1), `Erro` messages with the EMV error codes
 * and the documented texts (§2.1), base64url without padding (§1.4, §1.6), the URL rule for the
 * requestor's URLs, and the auto-posting HTML pages of the fake ACS (§1.4 step 4, §1.6).
 */
import type { IncomingHttpHeaders } from 'node:http';

/** §2.1: the versions 3dsecure.io speaks. */
export const MESSAGE_VERSIONS = ['2.1.0', '2.2.0', '2.3.1'] as const;
export type MessageVersion = (typeof MESSAGE_VERSIONS)[number];
export const isMessageVersion = (value: unknown): value is MessageVersion => (MESSAGE_VERSIONS as readonly unknown[]).includes(value);

export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';
export const TEXT_CONTENT_TYPE = 'text/plain; charset=utf-8';
export const HTML_CONTENT_TYPE = 'text/html; charset=utf-8';

/** Any UUID (what the fake accepts from a client), and a v4 one (what it issues). */
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;

/** What the fake answers: an HTTP status, a body and its media type. */
export interface Reply {
  status: number;
  contentType: string;
  body: string;
  headers?: Record<string, string>;
}

export const jsonReply = (status: number, body: unknown): Reply => ({ status, contentType: JSON_CONTENT_TYPE, body: JSON.stringify(body) });
export const textReply = (status: number, body: string, headers?: Record<string, string>): Reply => ({ status, contentType: TEXT_CONTENT_TYPE, body, headers });
export const htmlReply = (body: string): Reply => ({ status: 200, contentType: HTML_CONTENT_TYPE, body, headers: { 'cache-control': 'no-store' } });

/** A JSON object (what every message is). */
export type Message = Record<string, unknown>;

/** The message with its keys in alphabetical order and undefined members dropped, as 3dsecure.io's examples print them. */
export function message(fields: Record<string, unknown>): Message {
  const out: Message = {};
  for (const key of Object.keys(fields).sort()) if (fields[key] !== undefined) out[key] = fields[key];
  return out;
}

// --- Erro ----------------------------------------------------------------------------------------

/** §2.1: the EMV error codes the fake uses, with the EMV meaning as `errorDescription`. */
export const ERROR_DESCRIPTIONS = {
  '101': 'Message Received Invalid',
  '102': 'Message Version Number Not Supported',
  '201': 'Required Data Element Missing',
  '203': 'Format or value of one or more Data Elements is Invalid according to the Specification',
  '301': 'Transaction ID Not Recognized',
  '305': 'Transaction Data Not Valid',
  '402': 'Transaction Timed Out',
  '403': 'Transient System Failure',
  '405': 'System Connection Failure',
} as const;
export type ErrorCode = keyof typeof ERROR_DESCRIPTIONS;

export interface RefusalOptions {
  /** Why, in words: appended to the EMV description (never a card number or other value of the request). */
  reason?: string;
  /** A documented text that replaces the description (e.g. `Unknown BIN`). */
  description?: string;
  /** Default `S` (3DS Server); the ACS pages use `A`. */
  component?: 'S' | 'A' | 'D';
  /** Whether the Erro carries the transaction id (default true when one is known). §2.2: `Unknown BIN` carries none. */
  withTransactionId?: boolean;
}

/**
 * An Erro the fake answers. `errorDetail` is the EMV convention: the data element at fault (or a
 * documented text such as `Connection timeout`), so that a test can assert on the field.
 */
export class Refusal extends Error {
  constructor(
    readonly errorCode: ErrorCode,
    readonly errorDetail: string,
    readonly options: RefusalOptions = {},
  ) {
    super(`${errorCode} ${errorDetail}${options.reason ? `: ${options.reason}` : ''}`);
  }
}

export const missing = (field: string, reason?: string) => new Refusal('201', field, { reason: reason ?? `${field} is required` });
export const badFormat = (field: string, reason: string) => new Refusal('203', field, { reason: `${field} ${reason}` });

export interface ErroContext {
  messageVersion?: string;
  threeDSServerTransID?: string;
  acsTransID?: string;
  dsTransID?: string;
  /** The type of the message that was refused (`AReq`, `CReq`). */
  errorMessageType?: string;
}

/** §2.1 Erro shape (2.2.0). */
export function erroMessage(refusal: Refusal, context: ErroContext): Message {
  const { reason, description, component, withTransactionId } = refusal.options;
  const known = withTransactionId !== false;
  return message({
    messageType: 'Erro',
    messageVersion: isMessageVersion(context.messageVersion) ? context.messageVersion : '2.2.0',
    errorCode: refusal.errorCode,
    errorComponent: component ?? 'S',
    errorDescription: description ?? (reason ? `${ERROR_DESCRIPTIONS[refusal.errorCode]}: ${reason}` : ERROR_DESCRIPTIONS[refusal.errorCode]),
    errorDetail: refusal.errorDetail,
    errorMessageType: context.errorMessageType,
    threeDSServerTransID: known ? context.threeDSServerTransID : undefined,
    acsTransID: known ? context.acsTransID : undefined,
    dsTransID: known ? context.dsTransID : undefined,
  });
}

// --- bodies --------------------------------------------------------------------------------------

/** §2.1: requests are `application/json` (a `charset` parameter, if any, must be utf-8). */
export function checkJsonContentType(headers: IncomingHttpHeaders): void {
  const type = headers['content-type'] ?? '';
  const [media, ...parameters] = type.split(';').map((part) => part.trim().toLowerCase());
  const charset = parameters.find((p) => p.startsWith('charset='));
  if (media !== 'application/json' || (charset !== undefined && charset.replace(/"/g, '') !== 'charset=utf-8')) {
    throw new Refusal('101', 'Content-Type', { reason: `requests must be application/json; charset=utf-8, not '${type || '(none)'}'` });
  }
}

/** A JSON object, else Erro 101. */
export function parseJsonObject(text: string, what = 'body'): Message {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Refusal('101', what, { reason: `${what} is not valid JSON` });
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new Refusal('101', what, { reason: `${what} must be a JSON object` });
  return value as Message;
}

/** The ACS pages take `application/x-www-form-urlencoded` (what a browser's form POST sends). */
export function parseBrowserForm(headers: IncomingHttpHeaders, body: string): Record<string, string> {
  const media = (headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (media !== 'application/x-www-form-urlencoded') {
    throw new Refusal('101', 'Content-Type', { component: 'A', reason: 'the ACS takes a form POST (application/x-www-form-urlencoded)' });
  }
  const form: Record<string, string> = {};
  for (const [key, value] of new URLSearchParams(body)) {
    if (Object.hasOwn(form, key)) throw new Refusal('101', key, { component: 'A', reason: `form field ${key} is given more than once` });
    form[key] = value;
  }
  return form;
}

// --- base64url -----------------------------------------------------------------------------------

/** base64url of the JSON, without padding (§1.4 step 2); `pad` adds it, to test a receiver's tolerance. */
export function encodeBase64urlJson(value: unknown, pad = false): string {
  const text = Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');
  return pad ? text + '='.repeat((4 - (text.length % 4)) % 4) : text;
}

/**
 * §1.4, §1.6: the JSON object inside a base64url form field sent by the requestor, which must not
 * be padded (EMVCo's clarification; the sandbox rejects padding since 2021). Erro 203 naming `field`.
 */
export function decodeBase64urlJson(field: string, value: string | undefined, component: 'S' | 'A' = 'A'): Message {
  if (value === undefined || value === '') throw new Refusal('201', field, { component, reason: `form field ${field} is required` });
  if (/=+$/.test(value)) throw new Refusal('203', field, { component, reason: `${field} is padded with '=': send base64url without padding` });
  if (!/^[A-Za-z0-9_-]+$/.test(value) || value.length % 4 === 1) {
    throw new Refusal('203', field, { component, reason: `${field} is not base64url (alphabet A-Z a-z 0-9 - _)` });
  }
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(value, 'base64url').toString('utf8'));
  } catch {
    throw new Refusal('203', field, { component, reason: `${field} does not decode to JSON` });
  }
  if (decoded === null || typeof decoded !== 'object' || Array.isArray(decoded)) {
    throw new Refusal('203', field, { component, reason: `${field} does not decode to a JSON object` });
  }
  return decoded as Message;
}

// --- URLs ----------------------------------------------------------------------------------------

const LOOPBACK_HOSTS = /^(127\.\d{1,3}\.\d{1,3}\.\d{1,3}|localhost|\[::1\])$/i;

/**
 * The requestor's URLs (notificationURL, threeDSRequestorURL, threeDSMethodNotificationURL): https,
 * as the DSs require (§1.5, §2.9), or plain http on a loopback host, since the tests run on plain
 * HTTP loopback. The reason it fails, or undefined.
 */
export function urlProblem(value: string, maxLength: number): string | undefined {
  if (value.length > maxLength) return `must be at most ${maxLength} characters`;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be an absolute URL';
  }
  if (url.protocol === 'https:') return undefined;
  if (url.protocol === 'http:' && LOOPBACK_HOSTS.test(url.hostname)) return undefined;
  return 'must be an https URL (plain http only on a loopback host: 127.0.0.1, localhost, [::1])';
}

// --- HTML ----------------------------------------------------------------------------------------

export const escapeHtml = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
const unescapeHtml = (text: string) =>
  text
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&');

function page(title: string, body: string): string {
  return [
    '<!doctype html>',
    '<html lang="en">',
    '<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${escapeHtml(title)}</title></head>`,
    `<body>${body}</body>`,
    '</html>',
    '',
  ].join('\n');
}

/**
 * A page whose small inline script posts `fields` to `action` at once (what an ACS does at the end
 * of the 3DS Method and of a challenge); a Continue button does it without JavaScript.
 */
export function autoPostPage(title: string, action: string, fields: Record<string, string>): string {
  const inputs = Object.entries(fields)
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
    .join('');
  return page(
    title,
    [
      `<form id="acs-post" method="post" action="${escapeHtml(action)}">${inputs}`,
      '<noscript><button type="submit">Continue</button></noscript></form>',
      "<script>document.getElementById('acs-post').submit();</script>",
    ].join('\n'),
  );
}

/** A page that never posts anything (3DS Method that times out, abandoned challenge). */
export function silentPage(title: string, text: string): string {
  return page(title, `<main><p>${escapeHtml(text)}</p></main>`);
}

/** The manual challenge page: a form with hidden fields and one submit button per choice. */
export function choicePage(
  title: string,
  intro: string,
  action: string,
  hidden: Record<string, string>,
  choices: { name: string; value: string; label: string }[],
): string {
  const inputs = Object.entries(hidden)
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
    .join('');
  const buttons = choices
    .map((c) => `<button type="submit" name="${escapeHtml(c.name)}" value="${escapeHtml(c.value)}">${escapeHtml(c.label)}</button>`)
    .join('\n');
  return page(
    title,
    [
      '<main>',
      `<h1>${escapeHtml(title)}</h1>`,
      `<p>${escapeHtml(intro)}</p>`,
      `<form id="acs-manual" method="post" action="${escapeHtml(action)}">${inputs}`,
      buttons,
      '</form>',
      '</main>',
    ].join('\n'),
  );
}

/** A form of a page of the fake: where it posts, its hidden fields and its buttons. */
export interface PageForm {
  action: string;
  fields: Record<string, string>;
  buttons: { name: string; value: string; label: string }[];
  /** Whether the page posts the form by itself (inline script). */
  autoSubmits: boolean;
}

/**
 * For tests without a browser: the form of an ACS page of the fake (undefined when the page has
 * none, e.g. a 3DS Method that times out). Reads only the markup this file writes.
 */
export function readPageForm(html: string): PageForm | undefined {
  const form = /<form id="([^"]*)" method="post" action="([^"]*)">([\s\S]*?)<\/form>/.exec(html);
  if (!form) return undefined;
  const fields: Record<string, string> = {};
  for (const m of form[3]!.matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g)) fields[unescapeHtml(m[1]!)] = unescapeHtml(m[2]!);
  const buttons = [...form[3]!.matchAll(/<button type="submit" name="([^"]*)" value="([^"]*)">([^<]*)<\/button>/g)].map((m) => ({
    name: unescapeHtml(m[1]!),
    value: unescapeHtml(m[2]!),
    label: unescapeHtml(m[3]!),
  }));
  return { action: unescapeHtml(form[2]!), fields, buttons, autoSubmits: html.includes(`document.getElementById('${form[1]}').submit()`) };
}
