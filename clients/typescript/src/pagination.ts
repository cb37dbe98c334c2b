/**
 * List iterators over both envelopes of INTERFACE §6: the cursor envelope (`nextOffset`/`hasMore`,
 * next page asked with `offset`) and the page envelope (`nextPage`, asked with `page`). The kind is
 * read from each answer, so one pair of functions serves every list route.
 */
import type { FetchOptions } from 'openapi-fetch';
import { PaymentsApiError, isApiError, unexpectedResponseBody } from './errors.js';
import type { paths } from './generated/openapi.js';

type GetOperation<P> = P extends keyof paths ? (paths[P] extends { get: infer O } ? O : never) : never;
type GetData<P> = GetOperation<P> extends { responses: { 200: { content: { 'application/json': infer D } } } } ? D : never;

/** Every GET route that answers a list envelope (`items`). */
export type ListPath = { [P in keyof paths]: GetData<P> extends { items: unknown[] } ? P : never }[keyof paths];
/** One page's envelope of a list route. */
export type ListPage<P extends ListPath> = GetData<P>;
/** One item of a list route. */
export type ListItem<P extends ListPath> = GetData<P> extends { items: Array<infer I> } ? I : never;
/** What a list call takes: path parameters and the query (filters, `perPage`; the iterator sets `offset`/`page`). */
export type ListInit<P extends ListPath> = FetchOptions<GetOperation<P>>;

interface GetCapable {
  GET(path: string, init?: unknown): Promise<{ data?: unknown; error?: unknown; response: Response }>;
}

/** Yields each page's envelope, first to last, following `nextOffset` or `nextPage`. */
export async function* listPages<P extends ListPath>(client: GetCapable, path: P, init?: ListInit<P>): AsyncGenerator<ListPage<P>, void, undefined> {
  const base = (init ?? {}) as { params?: { query?: Record<string, unknown>; path?: Record<string, unknown> } };
  let next: Record<string, unknown> = {};
  for (;;) {
    const query = { ...(base.params?.query ?? {}), ...next };
    const { data, error, response } = await client.GET(path, { ...base, params: { ...(base.params ?? {}), query } });
    if (data === undefined) {
      throw new PaymentsApiError(response.status, isApiError(error) ? error : unexpectedResponseBody(response.status, String(error ?? '')));
    }
    const page = data as { hasMore?: boolean; nextOffset?: string | null; nextPage?: number | null };
    yield data as ListPage<P>;
    if ('nextOffset' in page) {
      if (!page.hasMore || !page.nextOffset || page.nextOffset === query.offset) return;
      next = { offset: page.nextOffset };
    } else {
      // Pages only move forward: a nextPage that does not is the end (never a loop).
      if (typeof page.nextPage !== 'number' || page.nextPage <= Number(query.page ?? 1)) return;
      next = { page: page.nextPage };
    }
  }
}

/** Yields every item of a list, across pages (a failed page throws PaymentsApiError). */
export async function* listItems<P extends ListPath>(client: GetCapable, path: P, init?: ListInit<P>): AsyncGenerator<ListItem<P>, void, undefined> {
  for await (const page of listPages(client, path, init)) {
    for (const item of (page as { items: ListItem<P>[] }).items) yield item;
  }
}
