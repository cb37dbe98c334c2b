/**
 * The 3dsecure.io sandbox's documented test cards (3dsecure-io.md §2.8). They fail the Luhn check
 * on purpose; in sandbox mode the payment window takes them all the same (INTERFACE §13), so a full
 * sandbox chain (3dsecure.io sandbox → Clearhaus test host, which takes Luhn-failing numbers) works.
 */
export const THREEDS_SANDBOX_PANS: ReadonlySet<string> = new Set([
  '5000100411110203', // 3DS Method times out, 2.1–2.2: ARes Y with threeDSCompInd N
  '4000100511112003', // frictionless with the 3DS Method, 2.2: Y
  '6000100611111103', // frictionless without the 3DS Method, 2.1: Y
  '3000100811111072', // manual challenge, 2.1
  '7000100911112070', // challenge that passes, 2.2
  '3000101011111071', // challenge that fails, 2.1
  '9000100111111111', // not enrolled (Erro 305)
]);
