/**
 * createPaymentsClient: an openapi-fetch client over the generated types (every route typed: path,
 * query and body in, `data` or the §3 `error` out), with the payments behaviour every call needs
 * (retry.ts) and list iterators (pagination.ts).
 */
import createClient, { type Client } from 'openapi-fetch';
import type { paths } from './generated/openapi.js';
import { listItems, listPages, type ListInit, type ListItem, type ListPage, type ListPath } from './pagination.js';
import { paymentsFetch, type FetchFn, type RetryOptions } from './retry.js';

export interface PaymentsClientOptions {
  /** The service's root URL, e.g. `http://127.0.0.1:8080` (paths carry `/public/api/v1` or `/sandbox/v1`). */
  baseUrl: string;
  /** Bearer credential: a merchant API key or access token, or the operator key (partner tier, sandbox). */
  token?: string;
  /** Retries of 429 and 503 answers after their `Retry-After`. */
  retry?: RetryOptions;
  /** Headers sent with every request. */
  headers?: Record<string, string>;
  /** The fetch to use (default globalThis.fetch). */
  fetch?: FetchFn;
}

export interface PaymentsClient extends Client<paths> {
  /** Every item of a list route, across pages: `for await (const { transaction } of client.items('/public/api/v1/transactions'))`. */
  items<P extends ListPath>(path: P, init?: ListInit<P>): AsyncGenerator<ListItem<P>, void, undefined>;
  /** Every page envelope of a list route, first to last. */
  pages<P extends ListPath>(path: P, init?: ListInit<P>): AsyncGenerator<ListPage<P>, void, undefined>;
}

export function createPaymentsClient(options: PaymentsClientOptions): PaymentsClient {
  const baseFetch: FetchFn = options.fetch ?? ((request) => globalThis.fetch(request));
  const headers: Record<string, string> = { ...(options.headers ?? {}) };
  if (options.token) headers.Authorization = `Bearer ${options.token}`;
  const client = createClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    headers,
    fetch: paymentsFetch(baseFetch, options.retry),
  });
  return Object.assign(client, {
    items: <P extends ListPath>(path: P, init?: ListInit<P>) => listItems(client as never, path, init),
    pages: <P extends ListPath>(path: P, init?: ListInit<P>) => listPages(client as never, path, init),
  });
}
