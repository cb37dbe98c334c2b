/**
 * The sandbox's virtual card terminal: a server-rendered page that shows what the terminal
 * displays (the amount of the sale waiting for a card) and lets a tester "tap" one of the test
 * cards. No build step; a few lines of script post the tap and refresh the status, and the page
 * still shows the current state without script. Card numbers never appear in the page: buttons
 * name test cards, the server looks the number up.
 */
import type { TerminalRequest } from '../modules/sales/sale.js';

export interface VirtualTerminalView {
  terminalId: string;
  terminalName: string | null;
  sale: {
    transactionId: string;
    type: string;
    state: string;
    stage: string;
    displayAmount: string;
    reference: string | null;
    /** What POST /sale asked of the terminal app (INTERFACE §11.6). */
    request: TerminalRequest;
  } | null;
  cards: Array<{ key: string; label: string }>;
}

const escapeHtml = (value: string): string => value.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** The sentence the terminal shows for a sale (or none). Shared by the page and its status endpoint. */
export function terminalMessage(sale: VirtualTerminalView['sale']): string {
  if (!sale) return 'No sale is waiting. Start one with POST /sale.';
  const what = sale.type === 'PAYOUT' ? `Payout of ${sale.displayAmount}` : `Pay ${sale.displayAmount}`;
  switch (sale.stage) {
    case 'QUEUED':
      return `${what}: the sale is on its way to the terminal.`;
    case 'WAITING_FOR_CARD':
      return `${what}: present a card.`;
    case 'CARD_PRESENTED':
      return `${what}: card presented, processing…`;
    default:
      return `${what}: ${sale.state}.`;
  }
}

const onOff = (value: boolean | null): string => (value === null ? "the terminal's setting" : value ? 'on' : 'off');

/** The terminal request of a sale as the lines the virtual terminal shows. */
export function terminalRequestLines(request: TerminalRequest): Array<[label: string, value: string]> {
  return [
    ['App notifications', request.suppressAppNotifications ? 'suppressed' : 'shown'],
    ['Switch back after', request.switchBackTimeout === null ? 'the app default' : `${request.switchBackTimeout} ms`],
    ['Activity to resume', request.activityToResume === null ? 'none' : request.activityToResume],
    ['Surcharge', onOff(request.surcharge)],
    ['Currency conversion (DCC)', onOff(request.dcc)],
  ];
}

export function renderVirtualTerminal(view: VirtualTerminalView): string {
  const name = escapeHtml(view.terminalName ?? 'Card terminal');
  const waiting = view.sale?.stage === 'WAITING_FOR_CARD';
  const buttons = view.cards
    .map((c) => `<li><button type="button" data-card="${escapeHtml(c.key)}"${waiting ? '' : ' disabled'}>Tap ${escapeHtml(c.label)}</button></li>`)
    .join('\n        ');
  const reference = view.sale?.reference ? `<p>Reference: <span id="reference">${escapeHtml(view.sale.reference)}</span></p>` : '';
  const request = view.sale
    ? `<h2 id="request-heading">Terminal request</h2>
    <dl id="request" aria-labelledby="request-heading">
      ${terminalRequestLines(view.sale.request)
        .map(([label, value]) => `<dt>${escapeHtml(label)}</dt><dd>${escapeHtml(value)}</dd>`)
        .join('\n      ')}
    </dl>`
    : '';
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <meta name="robots" content="noindex">
  <title>Virtual terminal — ${name}</title>
  <style>
    body { font-family: system-ui, sans-serif; max-width: 32rem; margin: 2rem auto; padding: 0 1rem; line-height: 1.5; color: #1a1a1a; }
    .screen { border: 2px solid #1a1a1a; border-radius: .5rem; padding: 1rem; font-size: 1.25rem; background: #f4f7f4; }
    ul { list-style: none; padding: 0; }
    li { margin: .5rem 0; }
    button { font-size: 1rem; padding: .6rem 1rem; width: 100%; text-align: left; cursor: pointer; }
    button:disabled { cursor: not-allowed; opacity: .6; }
    button:focus-visible { outline: 3px solid #1a5fb4; outline-offset: 2px; }
    .note { color: #444; font-size: .9rem; }
    dl { display: grid; grid-template-columns: auto 1fr; gap: .25rem 1rem; }
    dt { font-weight: 600; }
    dd { margin: 0; }
  </style>
</head>
<body>
  <main>
    <h1>Virtual terminal</h1>
    <p>Terminal: <strong>${name}</strong> <span class="note">(sandbox)</span></p>
    <div class="screen" id="screen" role="status" aria-live="polite">${escapeHtml(terminalMessage(view.sale))}</div>
    ${reference}
    ${request}
    <h2 id="cards-heading">Test cards</h2>
    <ul aria-labelledby="cards-heading">
        ${buttons}
    </ul>
    <p class="note">Buttons are active while the terminal waits for a card. <a href="">Refresh</a></p>
    <noscript><p>Tapping needs JavaScript; the sandbox API <code>POST /sandbox/v1/terminals/{terminalId}/tap</code> does the same.</p></noscript>
  </main>
  <script>
    (function () {
      var base = location.pathname.replace(/\\/$/, '');
      var screen = document.getElementById('screen');
      var buttons = Array.prototype.slice.call(document.querySelectorAll('button[data-card]'));
      var busy = false;
      // The sale whose details (reference, terminal request) the page was rendered with.
      var shown = ${JSON.stringify(view.sale?.transactionId ?? null)};
      function show(status) {
        screen.textContent = status.message;
        buttons.forEach(function (b) { b.disabled = busy || !status.sale || status.sale.stage !== 'WAITING_FOR_CARD'; });
      }
      function refresh() {
        fetch(base + '/status', { headers: { accept: 'application/json' } })
          .then(function (r) { return r.json(); })
          .then(function (s) {
            if (busy || !s || !s.message) return;
            // A new sale reached the terminal: render the page again for its details.
            if (s.sale && s.sale.transactionId !== shown) { location.reload(); return; }
            show(s);
          })
          .catch(function () {});
      }
      buttons.forEach(function (button) {
        button.addEventListener('click', function () {
          busy = true;
          buttons.forEach(function (b) { b.disabled = true; });
          screen.textContent = 'Card presented, processing…';
          fetch(base + '/tap', { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify({ card: button.getAttribute('data-card') }) })
            .then(function (r) { return r.json(); })
            .then(function (s) { busy = false; show(s && s.message ? s : { message: 'The tap was refused.', sale: null }); })
            .catch(function () { busy = false; screen.textContent = 'The terminal could not be reached.'; });
        });
      });
      setInterval(refresh, 2000);
    })();
  </script>
</body>
</html>`;
}

export function renderTerminalNotFound(): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Terminal not found</title></head>
<body><main><h1>Terminal not found</h1><p>There is no terminal with this id.</p></main></body></html>`;
}
