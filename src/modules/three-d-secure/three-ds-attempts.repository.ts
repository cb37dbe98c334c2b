import type { ThreeDSAttempt, ThreeDSStep } from './three-ds-attempt.js';

export interface ThreeDSAttemptsRepository {
  insert(attempt: ThreeDSAttempt): Promise<void>;
  find(id: string): Promise<ThreeDSAttempt | null>;
  findByServerTransId(threeDSServerTransID: string): Promise<ThreeDSAttempt | null>;
  /** Records the 3DS Method's notification once, while the attempt is in METHOD; false otherwise. */
  markMethodCompleted(id: string, at: string): Promise<boolean>;
  /** METHOD → CHALLENGE with the ACS of the ARes; false when the attempt was not in METHOD. */
  toChallenge(id: string, acs: { acsUrl: string; acsTransId: string | null }, steps: ThreeDSStep[], at: string): Promise<boolean>;
  /**
   * `from` → DONE, the card erased, once: false when another request finished it first (a CRes
   * posted twice, a reload), so that one attempt never authorizes twice.
   */
  finish(id: string, from: 'METHOD' | 'CHALLENGE', steps: ThreeDSStep[], at: string): Promise<boolean>;
  /** The payment the attempt led to, for its timeline. */
  linkTransaction(id: string, transactionId: string): Promise<void>;
}
