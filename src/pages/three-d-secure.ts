/**
 * The payment window's 3-D Secure steps (INTERFACE §13): small pages with inline scripts allowed by
 * a per-response nonce. Each works from the keyboard and announces itself to screen readers; without
 * JavaScript a Continue button does what the script would.
 */
import { escapeHtml, formatAmount, page } from './payment-window.js';

export interface MethodView {
  merchant: string;
  amount: number;
  currency: string;
  /** The ACS's 3DS Method page and its data; null: no 3DS Method for this card. */
  method: { url: string; data: string } | null;
  /** Where the browser's fields go (the next step). */
  action: string;
  nonce: string;
  /** How long the 3DS Method may take (ms). */
  waitMs: number;
}

/** Reads what EMV's AReq wants from the browser, then posts it: after the 3DS Method's notification, or its time. */
export function methodPage(view: MethodView): string {
  const fields = ['javascriptEnabled', 'javaEnabled', 'language', 'colorDepth', 'screenHeight', 'screenWidth', 'timezoneOffset'];
  const body = `<h1 id="merchant">${escapeHtml(view.merchant)}</h1>
<p class="amount">${escapeHtml(formatAmount(view.amount, view.currency))}</p>
<div role="status" aria-live="polite"><p>Checking your card with your bank…</p></div>
${
  view.method
    ? `<iframe name="threeds-method" title="Card check by your bank" hidden style="display:none" width="0" height="0"></iframe>
<form id="threeds-method-form" method="post" action="${escapeHtml(view.method.url)}" target="threeds-method"><input type="hidden" name="threeDSMethodData" value="${escapeHtml(view.method.data)}"></form>`
    : ''
}
<form id="threeds-browser" method="post" action="${escapeHtml(view.action)}">
${fields.map((f) => `<input type="hidden" name="${f}" value="${f === 'javascriptEnabled' ? 'false' : ''}">`).join('\n')}
<noscript><button type="submit">Continue</button></noscript>
</form>`;
  const code = `(function(){
var f=document.getElementById('threeds-browser');
function set(n,v){f.elements[n].value=String(v);}
set('javascriptEnabled',true);
set('javaEnabled',typeof navigator.javaEnabled==='function'&&navigator.javaEnabled()?true:false);
set('language',navigator.language||'');
set('colorDepth',screen.colorDepth);set('screenHeight',screen.height);set('screenWidth',screen.width);
set('timezoneOffset',new Date().getTimezoneOffset());
var sent=false;function go(){if(sent)return;sent=true;f.submit();}
var m=document.getElementById('threeds-method-form');
if(!m){go();return;}
window.addEventListener('message',function(e){if(e.origin===location.origin&&e.data==='threeds-method-done')go();});
setTimeout(go,${Math.max(0, Math.floor(view.waitMs))});
m.submit();
})();`;
  return page('Checking your card', body, undefined, { nonce: view.nonce, code });
}

export interface ChallengeView {
  merchant: string;
  amount: number;
  currency: string;
  acsUrl: string;
  creq: string;
  sessionData: string;
  nonce: string;
}

/** The bank's challenge in a frame of the window: the CReq posted to the ACS. */
export function challengePage(view: ChallengeView): string {
  const body = `<h1 id="merchant">${escapeHtml(view.merchant)}</h1>
<p class="amount">${escapeHtml(formatAmount(view.amount, view.currency))}</p>
<p id="threeds-challenge-help">Your bank asks you to confirm this payment.</p>
<iframe name="threeds-challenge" title="Confirm the payment with your bank" aria-describedby="threeds-challenge-help" style="width:100%;min-height:420px;border:1px solid #767676;border-radius:4px"></iframe>
<form id="threeds-challenge-form" method="post" action="${escapeHtml(view.acsUrl)}" target="threeds-challenge">
<input type="hidden" name="creq" value="${escapeHtml(view.creq)}">
<input type="hidden" name="threeDSSessionData" value="${escapeHtml(view.sessionData)}">
<noscript><button type="submit">Open your bank's page</button></noscript>
</form>`;
  const code = `document.getElementById('threeds-challenge-form').submit();`;
  return page('Confirm with your bank', body, undefined, { nonce: view.nonce, code });
}

/** The 3DS Method's notification, inside its hidden frame: tells the window it may go on. */
export function methodDonePage(nonce: string): string {
  return page('Card check', '<h1 id="merchant">Card check done</h1>', undefined, {
    nonce,
    code: `parent.postMessage('threeds-method-done',location.origin);`,
  });
}

/** The challenge's end, inside the challenge frame: the whole window goes where the payment led. */
export function challengeDonePage(next: string, nonce: string): string {
  return page('Payment', `<h1 id="merchant">Your bank has answered</h1><p><a href="${escapeHtml(next)}" target="_top">Continue</a></p>`, undefined, {
    nonce,
    code: `window.top.location.href=${JSON.stringify(next).replace(/</g, '\\u003c')};`,
  });
}
