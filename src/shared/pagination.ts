/**
 * The two list envelopes (INTERFACE §6) shared by every list: page-based with URLs, and
 * cursor-based with opaque keyset cursors (createdAt desc, id desc). Wire shapes and plain
 * functions like wire.ts, no HTTP: modules build their lists with them, storage walks `Keyset`.
 */
import { type TSchema, Type } from '@sinclair/typebox';
import { AppError } from './errors.js';

export const MAX_PAGE = 10_000_000;
export const PerPage = Type.Integer({ minimum: 1, maximum: 500, default: 25, description: 'Items per page (1–500).' });
export const PageQuery = Type.Object({
  // Bounded so that (page - 1) · perPage stays an exact integer that both databases accept as OFFSET.
  page: Type.Integer({ minimum: 1, maximum: MAX_PAGE, default: 1, description: 'Page number, from 1.' }),
  perPage: PerPage,
});
export const CursorQuery = Type.Object({
  perPage: PerPage,
  offset: Type.String({ default: '', maxLength: 512, description: 'Cursor from `nextOffset`; empty for the first page.' }),
});

/** Where the page URLs of the OpenAPI examples point (the document's own server is the deployment's). */
const EXAMPLE_BASE_URL = 'https://payments.example.com/public/api/v1';

/** Schema options of an envelope: the OpenAPI examples of the list. */
export interface EnvelopeOptions {
  examples?: unknown[];
}

export function PageEnvelope<T extends TSchema>(item: T, options: EnvelopeOptions = {}) {
  const nullableInt = Type.Union([Type.Integer(), Type.Null()]);
  const nullableString = Type.Union([Type.String(), Type.Null()]);
  return Type.Object(
    {
      page: Type.Integer(),
      perPage: Type.Integer(),
      lastPage: Type.Integer(),
      total: Type.Integer(),
      from: nullableInt,
      to: nullableInt,
      firstPageUrl: Type.String(),
      lastPageUrl: Type.String(),
      nextPageUrl: nullableString,
      previousPageUrl: nullableString,
      path: Type.String(),
      nextPage: nullableInt,
      previousPage: nullableInt,
      items: Type.Array(item),
    },
    options,
  );
}

export function CursorEnvelope<T extends TSchema>(item: T, options: EnvelopeOptions = {}) {
  return Type.Object(
    {
      currentOffset: Type.String(),
      nextOffset: Type.Union([Type.String(), Type.Null()]),
      perPage: Type.Integer(),
      hasMore: Type.Boolean(),
      items: Type.Array(item),
    },
    options,
  );
}

/** An example page of `path` (e.g. `/subscriptions`) holding `items`, built by the envelope function the lists use. */
export function pageExample<T>(path: string, items: T[], total = items.length) {
  return pageEnvelope({ page: 1, perPage: 25, url: `${EXAMPLE_BASE_URL}${path}`, query: new URLSearchParams() }, items, total);
}

/** An example first page of a cursor list holding `items`; with `more`, a cursor to the next page after the last one. */
export function cursorExample<T>(items: T[], keyOf: (item: T) => Keyset, more = false) {
  return cursorEnvelope('', more ? items.length : 25, more ? [...items, items[items.length - 1]!] : items, keyOf);
}

export interface PageRequest {
  page: number;
  perPage: number;
  /** Absolute URL of the list without query string. */
  url: string;
  /** The request's query parameters, kept in page URLs. */
  query: URLSearchParams;
}

export const pageOffset = (page: number, perPage: number): number => (page - 1) * perPage;

export function pageEnvelope<T>(request: PageRequest, items: T[], total: number) {
  const { page, perPage } = request;
  const lastPage = Math.max(1, Math.ceil(total / perPage));
  const urlOf = (n: number): string => {
    const q = new URLSearchParams(request.query);
    q.set('page', String(n));
    q.set('perPage', String(perPage));
    return `${request.url}?${q.toString()}`;
  };
  const from = items.length ? pageOffset(page, perPage) + 1 : null;
  const nextPage = page < lastPage ? page + 1 : null;
  const previousPage = page > 1 ? Math.min(page - 1, lastPage) : null;
  return {
    page,
    perPage,
    lastPage,
    total,
    from,
    to: from === null ? null : from + items.length - 1,
    firstPageUrl: urlOf(1),
    lastPageUrl: urlOf(lastPage),
    nextPageUrl: nextPage === null ? null : urlOf(nextPage),
    previousPageUrl: previousPage === null ? null : urlOf(previousPage),
    path: request.url,
    nextPage,
    previousPage,
    items,
  };
}

/** Position of a row in a newest-first keyset walk. */
export interface Keyset {
  createdAt: string;
  id: string;
}

export function encodeCursor(position: Keyset): string {
  return Buffer.from(JSON.stringify([position.createdAt, position.id])).toString('base64url');
}

/** Opaque cursor → keyset position; a cursor that was not made here → 422 on `offset`. */
export function decodeCursor(offset: string): Keyset | null {
  if (offset === '') return null;
  try {
    const value: unknown = JSON.parse(Buffer.from(offset, 'base64url').toString('utf8'));
    if (Array.isArray(value) && value.length === 2 && typeof value[0] === 'string' && typeof value[1] === 'string' && !Number.isNaN(Date.parse(value[0]))) {
      return { createdAt: new Date(value[0]).toISOString(), id: value[1] };
    }
  } catch {
    // fall through
  }
  throw new AppError('VALIDATION_ERROR', 'The offset is not a cursor returned by this list.', {
    offset: ['[regex]: must be a nextOffset value returned by this list'],
  });
}

export function cursorEnvelope<T>(offset: string, perPage: number, rows: T[], keyOf: (row: T) => Keyset) {
  const hasMore = rows.length > perPage;
  const items = hasMore ? rows.slice(0, perPage) : rows;
  const last = items[items.length - 1];
  return {
    currentOffset: offset,
    nextOffset: hasMore && last ? encodeCursor(keyOf(last)) : null,
    perPage,
    hasMore,
    items,
  };
}
