// The order and company of test files in scripts/test.mjs.
//
// SLOWEST: files known to take longest, longest first (two runs of the suite on a 2-core host).
// They start first so that the run does not end with a long file alone; every other file follows
// in path order. `npm test` closes with its slowest files: keep this roughly in step with them.
export const SLOWEST = [
  'test/e2e/three-d-secure.browser.test.ts',
  'test/foundation/route-fuzz.test.ts',
  'test/acquirers/clearhaus-isolation.test.ts',
  'test/foundation/rate-limit-deployment.test.ts',
  'test/foundation/openapi-examples.test.ts',
  'test/e2e/crash-safety.test.ts',
  'test/acquirers/clearhaus-failures.test.ts',
  'test/e2e/billing-two-processes.test.ts',
  'test/e2e/database-outage.test.ts',
  'test/e2e/clearhaus-crash.test.ts',
  'test/foundation/bootstrap.test.ts',
  'test/foundation/operations-endpoints.test.ts',
  'test/webhooks/delivery-fairness.test.ts',
  'test/terminal/sales.errors.test.ts',
  'test/webhooks/webhooks.errors.test.ts',
  'test/dashboard/merchant-views.browser.test.ts',
  'test/client/package.test.ts',
  'test/e2e/payment-window.browser.test.ts',
  'test/client/client-e2e.test.ts',
  'test/dashboard/truthful.browser.test.ts',
  'test/foundation/process-hardening.test.ts',
  'test/online/cit-session-hooks.test.ts',
  'test/webhooks/webhooks.happy.test.ts',
  'test/settlements/settlements.concurrency.test.ts',
  'test/acquirers/clearhaus-flows.test.ts',
  'test/online/retry-after.test.ts',
  'test/lifecycle/lifecycle.errors.test.ts',
  'test/dashboard/dashboard.browser.test.ts',
  'test/foundation/business-logs.test.ts',
  'test/online/mit-ingestion-caps.test.ts',
  'test/terminal/sales.happy.test.ts',
  'test/online/online.security.test.ts',
];

// TIMING_SENSITIVE: files that measure time or race deadlines under load (database outage, crash
// and restart, overload, the slow acquirer's p99, delivery pacing). Each runs beside at most one
// other file, never beside another of this list (its load would fall into their measurements),
// however many run otherwise.
export const TIMING_SENSITIVE = [
  'test/acquirers/clearhaus-isolation.test.ts',
  'test/e2e/billing-two-processes.test.ts',
  'test/e2e/clearhaus-crash.test.ts',
  'test/e2e/crash-safety.test.ts',
  'test/e2e/database-outage.test.ts',
  'test/foundation/backlog-gauge.test.ts',
  'test/foundation/drain-meter.test.ts',
  'test/online/backlog.test.ts',
  'test/online/ingestion-ahead.test.ts',
  'test/webhooks/delivery-fairness.test.ts',
];
