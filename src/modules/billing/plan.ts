/** Billing plan: the price, interval and retry policy that billing agreements charge by. */
import type { InstantCapture } from '../transactions/transaction.js';
import type { Interval } from './billing-schedule.js';

export interface BillingPlan {
  id: string;
  accountId: string;
  name: string;
  /** Minor units, ≥ 1. */
  amount: number;
  currency: string;
  /** Attempts per charge (1..31) before the charge is FAILED. */
  maxAttempts: number;
  interval: Interval;
  /** How the charge's MIT transactions capture (INTERFACE §7 instantCapture). */
  instantCapture: InstantCapture;
  color: string | null;
  emoji: string | null;
  createdAt: string;
}
