/**
 * The AReq of a browser payment (3dsecure-io.md §1.5, §2.4): what the window collected from the
 * browser, the card, the purchase, and the merchant as the acquirer knows it (Clearhaus
 * `GET /account`: BIN, merchant id, MCC, country). Field formats are EMV's; a value that cannot be
 * given in its format is left out when optional, and makes the AReq impossible (null) when required.
 */
import { CURRENCY_EXPONENTS } from '../../shared/currencies.js';
import { COUNTRY_NUMERIC, CURRENCY_NUMERIC } from './iso-codes.js';

/** What the page's script read from the browser (all strings as posted; checked here). */
export interface BrowserInfo {
  acceptHeader: string;
  userAgent: string;
  ip: string | null;
  javascriptEnabled: boolean;
  language: string | null;
  javaEnabled: boolean | null;
  colorDepth: string | null;
  screenHeight: string | null;
  screenWidth: string | null;
  timezoneOffset: string | null;
}

export interface MerchantAtAcquirer {
  /** The acquirer BIN of the card's scheme (Clearhaus account `acquirer.visa_bin` / `mastercard_bin`). */
  acquirerBin: string;
  /** 15 digits, leading zeros kept. */
  merchantId: string;
  mcc: string;
  /** ISO 3166-1 alpha-2, e.g. DK. */
  country: string;
  name: string;
}

export interface AReqInput {
  threeDSServerTransID: string;
  messageVersion: string;
  threeDSCompInd: 'Y' | 'N' | 'U';
  scaMode: string | null;
  /** Where the ACS posts the CRes (our https URL). */
  notificationURL: string;
  /** The merchant's website (or this service's page). */
  requestorURL: string;
  card: { pan: string; expiryMonth: number; expiryYear: number; holderName: string | null };
  amount: number;
  currency: string;
  /** The service clock's now (ms): purchaseDate is UTC. */
  nowMs: number;
  merchant: MerchantAtAcquirer;
  browser: BrowserInfo;
}

const COLOR_DEPTHS = [1, 4, 8, 15, 16, 24, 32, 48];

/** `screen.colorDepth` as EMV takes it: one of the listed values, else the closest lower one (30 → 24). */
export function colorDepthOf(value: string | null): string | null {
  const depth = Number(value);
  if (!Number.isInteger(depth) || depth < 1) return null;
  return String(COLOR_DEPTHS.filter((d) => d <= depth).pop() ?? 1);
}

/** Letters with no decomposition into an ASCII letter and a mark. */
const LATIN_LETTERS: Readonly<Record<string, string>> = {
  Æ: 'AE',
  æ: 'ae',
  Ø: 'O',
  ø: 'o',
  ß: 'ss',
  Ł: 'L',
  ł: 'l',
  Đ: 'D',
  đ: 'd',
  Þ: 'Th',
  þ: 'th',
  Œ: 'OE',
  œ: 'oe',
};

/** Printable ASCII, 2–45 characters (2.1/2.2 allow no other); accents dropped first (Åse Ødegård → Ase Odegard). */
export function asciiHolderName(name: string | null): string | null {
  if (!name) return null;
  const plain = name
    .replace(/[ÆæØøßŁłĐđÞþŒœ]/g, (letter) => LATIN_LETTERS[letter] ?? letter)
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/\s+/g, ' ')
    .trim();
  return /^[\x20-\x7e]{2,45}$/.test(plain) ? plain : null;
}

const digits = (value: string | null, max: number): string | null => (value !== null && new RegExp(`^[0-9]{1,${max}}$`).test(value) ? value : null);

/** The AReq, or null when a required value cannot be given (a currency or country without its ISO number). */
export function buildAReq(input: AReqInput): Record<string, unknown> | null {
  const currency = CURRENCY_NUMERIC[input.currency];
  const exponent = CURRENCY_EXPONENTS.get(input.currency);
  const country = COUNTRY_NUMERIC[input.merchant.country.toUpperCase()];
  if (!currency || exponent === undefined || !country) return null;
  const { browser, card } = input;
  const areq: Record<string, unknown> = {
    messageType: 'AReq',
    messageVersion: input.messageVersion,
    messageCategory: '01',
    deviceChannel: '02',
    threeDSServerTransID: input.threeDSServerTransID,
    threeDSCompInd: input.threeDSCompInd,
    threeDSRequestorAuthenticationInd: '01',
    // [INFERENCE] FORCE asks for a challenge (04, "mandate"), as 3dsecure.io suggests where PSD2 requires one.
    threeDSRequestorChallengeInd: input.scaMode === 'FORCE' ? '04' : '01',
    threeDSRequestorURL: input.requestorURL,
    notificationURL: input.notificationURL,
    acctNumber: card.pan,
    cardExpiryDate: `${String(card.expiryYear % 100).padStart(2, '0')}${String(card.expiryMonth).padStart(2, '0')}`,
    acquirerBIN: input.merchant.acquirerBin,
    acquirerMerchantID: input.merchant.merchantId,
    mcc: input.merchant.mcc,
    merchantCountryCode: country,
    merchantName: input.merchant.name.slice(0, 40),
    purchaseAmount: String(input.amount),
    purchaseCurrency: currency,
    purchaseExponent: String(exponent),
    purchaseDate: new Date(input.nowMs).toISOString().replace(/[-:T]/g, '').slice(0, 14),
    transType: '01',
    browserAcceptHeader: browser.acceptHeader.slice(0, 2048) || '*/*',
    browserUserAgent: browser.userAgent.slice(0, 2048),
  };
  // 2.1.0 has no browserJavascriptEnabled: its script-read fields are always required.
  const v210 = input.messageVersion === '2.1.0';
  if (!v210) areq.browserJavascriptEnabled = browser.javascriptEnabled;
  const holderName = asciiHolderName(card.holderName);
  if (holderName) areq.cardholderName = holderName;
  if (browser.ip && browser.ip.length <= 45) areq.browserIP = browser.ip;
  const language = browser.language && /^[A-Za-z0-9-]{1,8}$/.test(browser.language) ? browser.language : null;
  areq.browserLanguage = language ?? 'en';
  if (browser.javascriptEnabled || v210) {
    areq.browserJavaEnabled = browser.javaEnabled ?? false;
    areq.browserColorDepth = colorDepthOf(browser.colorDepth) ?? '24';
    areq.browserScreenHeight = digits(browser.screenHeight, 6) ?? '0';
    areq.browserScreenWidth = digits(browser.screenWidth, 6) ?? '0';
    areq.browserTZ = browser.timezoneOffset !== null && /^[+-]?[0-9]{1,4}$/.test(browser.timezoneOffset) ? browser.timezoneOffset : '0';
  }
  return areq;
}
