/**
 * The public pages of a multi-link (INTERFACE §11.3) that are not the payment window itself: the
 * "no longer active" page (410), the "not found" and "cannot be used now" pages, and the QR code
 * image of a link. Pure functions; the QR code is encoded by the `qrcode` library (never by hand).
 */
import QRCode from 'qrcode';
import { escapeHtml } from './payment-window.js';

const STYLE = `
  *{box-sizing:border-box}
  body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1a1a1a;background:#f4f5f7}
  main{max-width:28rem;margin:2rem auto;padding:1.5rem;background:#fff;border-radius:8px;box-shadow:0 1px 3px rgba(0,0,0,.15)}
  h1{font-size:1.25rem;margin:0 0 .75rem}
`;

/** Headers of every multi-link page: nothing cached, nothing framed, nothing loaded from elsewhere. */
export const LINK_PAGE_HEADERS: Record<string, string> = {
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'cache-control': 'no-store',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
};

function page(title: string, text: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(title)}</title>
<style>${STYLE}</style>
</head>
<body>
<main aria-labelledby="title">
<h1 id="title">${escapeHtml(title)}</h1>
<p>${escapeHtml(text)}</p>
</main>
</body>
</html>
`;
}

/** A deactivated multi-link (HTTP 410). */
export function linkGonePage(): string {
  return page(
    'This payment link is no longer active',
    'The shop has deactivated this payment link, so it cannot be used to pay any more. No payment has been started. Please contact the shop for a new link.',
  );
}

/** No multi-link with this id (HTTP 404). */
export function linkNotFoundPage(): string {
  return page('Payment link not found', 'This payment link is not valid. Please check the address, or contact the shop for a new link.');
}

/** The link exists but cannot start a payment now (its settings no longer make a valid payment). */
export function linkUnavailablePage(): string {
  return page(
    'This payment link cannot be used right now',
    'A payment could not be started from this link. No money has been taken. Please try again later or contact the shop.',
  );
}

/** A PNG image of a QR code of `text` (error correction M, a 4-module quiet zone). */
export function qrPng(text: string): Promise<Buffer> {
  return QRCode.toBuffer(text, { type: 'png', errorCorrectionLevel: 'M', margin: 4, scale: 8 });
}
