/**
 * Settlements: the transfers (cursor pages, newest first), one transfer with its adjustments and
 * the fees of each settled transaction, and those rows as CSV. The API has no CSV of its own, so
 * the page walks GET /settlements/transfers/{id}/transactions (500 a page) and builds the file.
 */
import { useState } from 'preact/hooks';
import { api, ApiError } from './api';
import { csvLine } from './csv';
import { money, when } from './format';
import type { CursorPage, SettlementTransaction, SettlementTransfer, Transaction } from './types';
import { errorText, Facts, ListState, ListTable, NotFound, type Outcome, OutcomeLine, useApi } from './ui';

const FEE_TYPES = ['ACQUIRER_FEE', 'INTERCHANGE_FEE', 'SCHEME_FEE'] as const;
type Row = { settlementTransaction: SettlementTransaction; transaction: Transaction };

const fee = (st: SettlementTransaction, type: string): string => st.adjustments.find((a) => a.type === type)?.amount ?? '0';

/** Cursor paging: the stack of offsets walked so far (the API pages forward only). */
function useCursor() {
  const [cursors, setCursors] = useState<string[]>(['']);
  const offset = cursors[cursors.length - 1]!;
  return {
    query: offset ? `&offset=${encodeURIComponent(offset)}` : '',
    canGoBack: cursors.length > 1,
    back: () => setCursors(cursors.slice(0, -1)),
    forward: (next: string) => setCursors([...cursors, next]),
  };
}

function CursorPager({ cursor, page }: { cursor: ReturnType<typeof useCursor>; page: CursorPage<unknown> | null }) {
  return (
    <nav class="pager" aria-label="Pages">
      <button type="button" disabled={!cursor.canGoBack} onClick={cursor.back}>
        Previous page
      </button>
      <button type="button" disabled={!page?.hasMore} onClick={() => page?.nextOffset && cursor.forward(page.nextOffset)}>
        Next page
      </button>
    </nav>
  );
}

export function Settlements() {
  const cursor = useCursor();
  const list = useApi<CursorPage<{ settlementTransfer: SettlementTransfer }>>(`/settlements/transfers?perPage=25${cursor.query}`);
  const items = list.data?.items;
  return (
    <section aria-labelledby="settlements-title">
      <h1 id="settlements-title">Settlements</h1>
      <ListState loaded={list} count={items?.length} empty="No settlement transfers yet." />
      {items && items.length > 0 && (
        <ListTable caption="Settlement transfers, newest first" columns={['Posting date', 'Transfer', 'Acquirer', ['Net amount', 'num'], 'Acquirer reference']}>
          {items.map(({ settlementTransfer: t }) => (
            <tr key={t.id}>
              <td>{t.postingDate}</td>
              <td>
                <a href={`#/settlements/${encodeURIComponent(t.id)}`}>{t.id}</a>
              </td>
              <td>{t.acquirer}</td>
              <td class="num">{`${t.netAmount} ${t.currency}`}</td>
              <td>{t.acquirerReference}</td>
            </tr>
          ))}
        </ListTable>
      )}
      <CursorPager cursor={cursor} page={list.data} />
    </section>
  );
}

const CSV_HEADER = [
  'settlementTransactionId',
  'transactionId',
  'type',
  'amount',
  'merchantReference',
  'acquirerReference',
  'postingDate',
  ...FEE_TYPES,
  'settlementNetAmount',
  'settlementCurrency',
  'createdAt',
];

/** Offers `text` as a file download (a blob URL: nothing leaves the page). */
function download(filename: string, text: string): void {
  const url = URL.createObjectURL(new Blob([text], { type: 'text/csv;charset=utf-8' }));
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Every settled transaction of the transfer as CSV; a 429 (list rate limit) is waited out. */
async function transferCsv(transferId: string): Promise<string> {
  let csv = csvLine(CSV_HEADER);
  let offset = '';
  for (;;) {
    let page: CursorPage<Row>;
    try {
      page = await api.get<CursorPage<Row>>(
        `/settlements/transfers/${encodeURIComponent(transferId)}/transactions?perPage=500${offset ? `&offset=${encodeURIComponent(offset)}` : ''}`,
      );
    } catch (e) {
      if (e instanceof ApiError && e.status === 429) {
        await wait(5000);
        continue;
      }
      throw e;
    }
    for (const { settlementTransaction: st, transaction: tx } of page.items) {
      csv += csvLine([
        st.id,
        st.transactionId,
        tx.type,
        tx.amount,
        st.merchantReference,
        st.acquirerReference,
        st.postingDate,
        ...FEE_TYPES.map((type) => fee(st, type)),
        st.settlementNetAmount,
        st.settlementCurrency,
        st.createdAt,
      ]);
    }
    if (!page.hasMore || !page.nextOffset) return csv;
    offset = page.nextOffset;
  }
}

export function SettlementDetail({ id }: { id: string }) {
  const loaded = useApi<{ settlementTransfer: SettlementTransfer }>(`/settlements/transfers/${encodeURIComponent(id)}`);
  const cursor = useCursor();
  const rows = useApi<CursorPage<Row>>(`/settlements/transfers/${encodeURIComponent(id)}/transactions?perPage=50${cursor.query}`);
  const [exporting, setExporting] = useState(false);
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  if (loaded.notFound) return <NotFound what="Settlement transfer" back="#/settlements" backLabel="Back to settlements" />;
  const t = loaded.data?.settlementTransfer;
  if (!t) return <ListState loaded={loaded} count={undefined} empty="" />;
  const items = rows.data?.items;
  return (
    <section aria-labelledby="transfer-title">
      <p>
        <a href="#/settlements">Back to settlements</a>
      </p>
      <h1 id="transfer-title">Settlement transfer {t.id}</h1>
      <Facts
        rows={[
          ['Posting date', t.postingDate],
          ['Net amount', `${t.netAmount} ${t.currency}`],
          ['Acquirer', `${t.acquirer} (${t.settlementName})`],
          ['Acquirer reference', t.acquirerReference],
          ...t.adjustmentSums.map((a): [string, string] => [a.description, `${a.amount} ${t.currency}`]),
          ...t.adjustments.map((a): [string, string] => [`${a.type}: ${a.description}`, `${a.amount} ${t.currency}`]),
        ]}
      />
      <p>
        <button
          type="button"
          disabled={exporting}
          onClick={async () => {
            setExporting(true);
            setOutcome(null);
            try {
              download(`settlement-${t.postingDate}-${t.id}.csv`, await transferCsv(t.id));
              setOutcome({ ok: true, text: 'CSV ready.' });
            } catch (e) {
              setOutcome({ ok: false, text: errorText(e) });
            } finally {
              setExporting(false);
            }
          }}
        >
          Download fees as CSV
        </button>
      </p>
      <OutcomeLine outcome={outcome} />
      <h2>Transactions and fees</h2>
      <ListState loaded={rows} count={items?.length} empty="No transactions in this transfer." />
      {items && items.length > 0 && (
        <ListTable
          caption="Settled transactions with their fees"
          columns={['Payment', 'Reference', ['Amount', 'num'], ['Acquirer fee', 'num'], ['Interchange fee', 'num'], ['Scheme fee', 'num'], ['Net', 'num']]}
        >
          {items.map(({ settlementTransaction: st, transaction: tx }) => (
            <tr key={st.id}>
              <td>
                <a href={`#/payments/${encodeURIComponent(st.transactionId)}`}>{st.transactionId}</a> {tx.type}
              </td>
              <td class="reference">{st.merchantReference ?? ''}</td>
              <td class="num">{money(tx.amount, tx.currency)}</td>
              {FEE_TYPES.map((type) => (
                <td class="num">{fee(st, type)}</td>
              ))}
              <td class="num">{`${st.settlementNetAmount} ${st.settlementCurrency}`}</td>
            </tr>
          ))}
        </ListTable>
      )}
      <CursorPager cursor={cursor} page={rows.data} />
      <p class="hint">Settled {when(t.createdAt)}.</p>
    </section>
  );
}
