/**
 * createPaymentsClient: an openapi-fetch client over the generated types (every route typed: path,
 * query and body in, `data` or the §3 `error` out), with the payments behaviour every call needs
 * (retry.ts) and list iterators (pagination.ts).
 */
import createClient, {
  type Client,
  type ClientPathsWithMethod,
  type FetchOptions,
  type FetchResponse,
  type MaybeOptionalInit,
  type ParseAs,
} from 'openapi-fetch';
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

type Method = 'get' | 'put' | 'post' | 'delete' | 'patch';
/** The operation of a path and method. */
type Operation<P extends keyof paths, M extends Method> = paths[P] extends { [K in M]: infer O } ? O : never;
/** What one call takes (params, body, headers, fetch options), as the operation defines it; `parseAs` picks how `data` is read. */
type CallInit<P extends keyof paths, M extends Method, As extends ParseAs> = Omit<FetchOptions<Operation<P, M>>, 'parseAs'> & { parseAs?: As };

/**
 * One HTTP method of the client: openapi-fetch's, with the init checked as written. openapi-fetch
 * infers the init's type from the argument itself (a type parameter), and a type parameter is only
 * checked against its constraint, where TypeScript's excess-property check does not apply: a
 * misspelt body field (`currancy`) compiled and was sent. Here the init has the operation's own
 * type, so an unknown key in the body, its nested objects, params or query is a compile error.
 */
export type PaymentsMethod<M extends Method> = <P extends ClientPathsWithMethod<Client<paths>, M>, As extends ParseAs = 'json'>(
  url: P,
  ...init: undefined extends MaybeOptionalInit<paths[P], M> ? [init?: CallInit<P, M, As>] : [init: CallInit<P, M, As>]
) => Promise<FetchResponse<Extract<Operation<P, M>, Record<string, unknown>>, { parseAs: As }, `${string}/${string}`>>;

export interface PaymentsClient extends Omit<Client<paths>, 'GET' | 'PUT' | 'POST' | 'DELETE' | 'PATCH'> {
  /** Call a GET route. */
  GET: PaymentsMethod<'get'>;
  /** Call a PUT route. */
  PUT: PaymentsMethod<'put'>;
  /** Call a POST route. */
  POST: PaymentsMethod<'post'>;
  /** Call a DELETE route. */
  DELETE: PaymentsMethod<'delete'>;
  /** Call a PATCH route. */
  PATCH: PaymentsMethod<'patch'>;
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
  // The methods are openapi-fetch's; only their declared init type is stricter.
  return Object.assign(client as unknown as Omit<PaymentsClient, 'items' | 'pages'>, {
    items: <P extends ListPath>(path: P, init?: ListInit<P>) => listItems(client as never, path, init),
    pages: <P extends ListPath>(path: P, init?: ListInit<P>) => listPages(client as never, path, init),
  });
}
