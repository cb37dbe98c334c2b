/**
 * The currencies Clearhaus lists, with its minor-unit exponents: `website/content/currencies.md`
 * of clearhaus/gateway-api-docs at 63da699 (2026-08-06; BGN already removed, XCG and CNH present),
 * matching clearhaus.md §2.10. Clearhaus warns that some exponents may differ from ISO 4217; for
 * every code both lists hold they are equal today (checked by test/connectors/clearhaus-codes.test.ts).
 */
import { CURRENCY_EXPONENTS } from '../../shared/currencies.js';

const BY_EXPONENT: Record<number, string> = {
  0: 'BIF CLP DJF GNF ISK JPY KMF KRW PYG RWF UGX VND VUV XAF XOF XPF',
  2:
    'AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BMD BND BOB BRL BSD BTN BWP BYN BZD CAD CDF CHF CNH CNY COP CRC CUP ' +
    'CVE CZK DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL GHS GIP GMD GTQ GYD HKD HNL HTG HUF IDR ILS INR IRR JMD KES KGS KHR ' +
    'KPW KYD KZT LAK LBP LKR LRD LSL MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MYR MZN NAD NGN NIO NOK NPR NZD PAB PEN ' +
    'PGK PHP PKR PLN QAR RON RSD RUB SAR SBD SCR SDG SEK SGD SHP SLE SOS SRD SSP STN SVC SYP SZL THB TJS TMT TOP TRY TTD TWD ' +
    'TZS UAH USD UYU UZS WST XCD XCG YER ZAR ZMW ZWG',
  3: 'BHD IQD JOD KWD LYD OMR TND',
};

export const CLEARHAUS_CURRENCY_EXPONENTS: ReadonlyMap<string, number> = new Map(
  Object.entries(BY_EXPONENT).flatMap(([exponent, codes]) => codes.split(' ').map((code) => [code, Number(exponent)] as const)),
);

/**
 * Whether an amount in `currency` can go to Clearhaus as it is: Clearhaus lists the currency, with
 * the exponent our amounts are kept in. A currency listed with another exponent is refused rather
 * than converted — none is today, and money is never rounded to make it fit.
 */
export function isCurrencyAccepted(currency: string): boolean {
  const theirs = CLEARHAUS_CURRENCY_EXPONENTS.get(currency);
  return theirs !== undefined && theirs === CURRENCY_EXPONENTS.get(currency);
}
