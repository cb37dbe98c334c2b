/**
 * PostgreSQL's base types of the columns of the tables written many rows at a time (bulk-insert.ts),
 * by table and column: every column not listed is `text`. A multi-row insert into one of these
 * tables sends one array per column, cast to these types, and reads the rows from `unnest`. The
 * test pg-column-types.test.ts compares this map with the migrated schema.
 */
export const PG_BULK_COLUMN_TYPES: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  transactions: {
    amount: 'int8',
    fee: 'int8',
    authorized_amount: 'int8',
    captured_amount: 'int8',
    refunded_amount: 'int8',
    voided_amount: 'int8',
    paid_out_amount: 'int8',
    pending_amount: 'int8',
    pending_refund_amount: 'int8',
    created_at: 'timestamptz',
    updated_at: 'timestamptz',
    finalized_at: 'timestamptz',
  },
  operations: {
    amount: 'int8',
    created_at: 'timestamptz',
    finalized_at: 'timestamptz',
  },
  jobs: {
    run_at: 'timestamptz',
    attempts: 'int4',
    max_attempts: 'int4',
    lease_until: 'timestamptz',
    created_at: 'timestamptz',
    updated_at: 'timestamptz',
    finished_at: 'timestamptz',
  },
};
