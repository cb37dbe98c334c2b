/**
 * CSV export of the filtered payment list, streamed (issue 12): the rows are read page by page
 * through the public list endpoint (GET /transactions, the same use case, tenant isolation and
 * rate limit as any integrator; a 429 is waited out as its Retry-After says) and written as they
 * come, so an export of any size holds one page in memory.
 */
import { Readable } from 'node:stream';

export const CSV_COLUMNS = [
  'id',
  'createdAt',
  'finalizedAt',
  'state',
  'type',
  'amount',
  'currency',
  'reference',
  'errorCode',
  'paymentMethodType',
  'paymentMethodSubType',
  'customerId',
  'pointOfSaleId',
  'sessionId',
  'subscriptionId',
  'terminalId',
] as const;

/** Query parameters of GET /transactions the export passes on (the filters; paging is the export's own). */
export const EXPORT_FILTERS = [
  'sessionId',
  'terminalId',
  'pointOfSaleId',
  'subscriptionId',
  'billingAgreementChargeId',
  'reference',
  'referenceMode',
  'createdBefore',
  'createdAfter',
  'customerId',
  'currency',
  'state',
  'type',
  'errorCode',
  'paymentMethodType',
  'paymentMethodSubType',
  'amountMode',
  'amount',
  'feeMode',
  'fee',
] as const;

/** One CSV field (RFC 4180); a value a spreadsheet would run as a formula gets a leading quote. */
export function csvField(value: unknown): string {
  let text = value === null || value === undefined ? '' : typeof value === 'object' ? JSON.stringify(value) : String(value);
  if (/^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function csvRow(record: Record<string, unknown>): string {
  return CSV_COLUMNS.map((c) => csvField(record[c])).join(',') + '\r\n';
}

export interface ListPage {
  status: number;
  headers: Record<string, unknown>;
  body: { items?: Array<{ transaction: Record<string, unknown> }>; hasMore?: boolean; nextOffset?: string | null; message?: string };
}

/**
 * The CSV as a stream: `fetchPage(query)` answers one page of GET /transactions. A refused first
 * page (bad filter) rejects before anything is streamed, so the caller can answer it as an error.
 */
export async function csvStream(
  filters: URLSearchParams,
  fetchPage: (query: URLSearchParams) => Promise<ListPage>,
  wait: (ms: number) => Promise<void> = (ms) => new Promise((r) => setTimeout(r, ms)),
): Promise<Readable> {
  const pageAt = async (offset: string): Promise<ListPage> => {
    const q = new URLSearchParams();
    for (const name of EXPORT_FILTERS) for (const v of filters.getAll(name)) q.append(name, v);
    q.set('perPage', '500');
    if (offset) q.set('offset', offset);
    for (;;) {
      const page = await fetchPage(q);
      if (page.status !== 429) return page;
      await wait(Math.max(1, Number(page.headers['retry-after'] ?? 1)) * 1000);
    }
  };
  const first = await pageAt('');
  if (first.status !== 200) throw Object.assign(new Error(first.body.message ?? `HTTP ${first.status}`), { page: first });

  async function* rows(): AsyncGenerator<string> {
    yield CSV_COLUMNS.join(',') + '\r\n';
    let page = first;
    for (;;) {
      if (page.status !== 200) throw new Error(`export stopped: HTTP ${page.status}`);
      yield (page.body.items ?? []).map((i) => csvRow(i.transaction)).join('');
      if (!page.body.hasMore || !page.body.nextOffset) return;
      page = await pageAt(page.body.nextOffset);
    }
  }
  return Readable.from(rows());
}
