/** Figures of a webhook's delivery log, computed in the page from GET /webhooks/{id}/deliveries. */
import type { Delivery } from './types.js';

/** The window of the auto-pause rule (INTERFACE §8). */
export const FAILURE_WINDOW_MS = 7 * 86_400_000;

/** Failed attempts / attempts within the last 7 days before `now`; null without attempts. */
export function failureRate(deliveries: Delivery[], now: number): { failed: number; attempts: number; percent: number } | null {
  const recent = deliveries.flatMap((d) => d.attemptLog).filter((a) => now - Date.parse(a.attemptedAt) <= FAILURE_WINDOW_MS);
  if (recent.length === 0) return null;
  const failed = recent.filter((a) => !a.success).length;
  return { failed, attempts: recent.length, percent: Math.round((failed / recent.length) * 100) };
}
