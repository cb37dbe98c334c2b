/**
 * Where a payment's money moves (INTERFACE §12.1): the connector and the merchant's agreement with
 * it. A new payment goes where its account's agreement says (the sandbox simulator without one,
 * while the deployment is a sandbox); every later operation of a transaction goes where its
 * authorization went, whatever the agreement says by then. Terminal sales stay with the simulator.
 */
import type { Acquirer, AcquirerResult, AgreementCredentials } from '../../connectors/acquirer.js';
import type { Transaction, TransactionFlow } from './transaction.js';

export interface AcquirerRoute {
  acquirer: Acquirer;
  /** The agreement's row id (kept on the transaction); null: the simulator without an agreement. */
  agreementId: string | null;
  /** What the connector needs of the agreement (the API key opened for the call); null for the simulator without one. */
  agreement: AgreementCredentials | null;
}

export interface AcquirerRouting {
  /** Where a new payment of the account goes; null: nowhere (no agreement outside the sandbox: MISSING_ACQUIRER_AGREEMENT). */
  routeNew(accountId: string, flow: TransactionFlow): Promise<AcquirerRoute | null>;
  /** Where the operations of `transaction` go: the connector and agreement it was created with; null: none (never sent). */
  routeOf(transaction: Pick<Transaction, 'acquirer' | 'acquirerAgreementId' | 'flow'>): Promise<AcquirerRoute | null>;
  /**
   * Whether a card series started under agreement `agreementId` lives on under `route`: the same
   * acquirer account (an agreement replaced with the same acquirer and API key, e.g. a new MCC).
   */
  sameAccount(agreementId: string | null, route: AcquirerRoute): Promise<boolean>;
}

/** The name a transaction keeps when no acquirer would take it (nothing is ever sent for it). */
export const NO_ACQUIRER = 'none';

/** One connector for every payment, no agreements (tests, benchmarks, a deployment with the simulator only). */
export function singleAcquirer(acquirer: Acquirer): AcquirerRouting {
  const route: AcquirerRoute = { acquirer, agreementId: null, agreement: null };
  const answer = Promise.resolve(route);
  return {
    routeNew: () => answer,
    routeOf: (tx) => Promise.resolve(tx.acquirer === NO_ACQUIRER ? null : route),
    sameAccount: (agreementId, other) => Promise.resolve(agreementId === other.agreementId),
  };
}

/** An agreement as routing needs it (the acquirer-agreements module's credentials). */
export interface RoutedAgreement {
  id: string;
  acquirer: string;
  mcc: string;
  textOnStatement: string | null;
  /** Opened from the vault; null for a sandbox agreement. */
  apiKey: string | null;
}

export interface AgreementRoutingDeps {
  /** The simulator (or, in tests, a scripted acquirer): sandbox agreements, accounts without one in a sandbox, terminal sales. */
  sandbox: Acquirer;
  /** The Clearhaus connector; null when the deployment has no signing key (no Clearhaus agreement can be made then). */
  clearhaus: Acquirer | null;
  agreements: {
    currentFor(accountId: string): Promise<RoutedAgreement | null>;
    credentialsOf(agreementId: string): Promise<RoutedAgreement>;
  };
  /** PAYMENTS_SANDBOX: an account without an agreement uses the simulator (else nothing takes its payments). */
  sandboxMode: boolean;
}

/** Routes by the account's acquirer agreement (INTERFACE §12.1). */
export class AgreementRouting implements AcquirerRouting {
  private readonly simulator: AcquirerRoute;

  constructor(private readonly deps: AgreementRoutingDeps) {
    this.simulator = { acquirer: deps.sandbox, agreementId: null, agreement: null };
  }

  async routeNew(accountId: string, flow: TransactionFlow): Promise<AcquirerRoute | null> {
    // Card-present sales stay with the terminal simulator whatever the agreement.
    if (flow === 'SALE') return this.simulator;
    const agreement = await this.deps.agreements.currentFor(accountId);
    if (!agreement) return this.deps.sandboxMode ? this.simulator : null;
    return this.routeTo(agreement);
  }

  async routeOf(tx: Pick<Transaction, 'acquirer' | 'acquirerAgreementId' | 'flow'>): Promise<AcquirerRoute | null> {
    if (tx.acquirer === NO_ACQUIRER) return null;
    if (!tx.acquirerAgreementId) return this.simulator;
    return this.routeTo(await this.deps.agreements.credentialsOf(tx.acquirerAgreementId));
  }

  async sameAccount(agreementId: string | null, route: AcquirerRoute): Promise<boolean> {
    if (agreementId === route.agreementId) return true;
    if (agreementId === null || route.agreementId === null) return false;
    const [a, b] = await Promise.all([this.deps.agreements.credentialsOf(agreementId), this.deps.agreements.credentialsOf(route.agreementId)]);
    // The API key names the merchant's account at the acquirer (a rotated key is another account to us).
    return a.acquirer === b.acquirer && a.apiKey !== null && a.apiKey === b.apiKey;
  }

  private routeTo(agreement: RoutedAgreement): AcquirerRoute {
    const acquirer = agreement.acquirer === 'clearhaus' ? (this.deps.clearhaus ?? UNCONFIGURED) : this.deps.sandbox;
    return {
      acquirer,
      agreementId: agreement.id,
      agreement: { apiKey: agreement.apiKey, mcc: agreement.mcc, textOnStatement: agreement.textOnStatement },
    };
  }
}

/**
 * Clearhaus agreements on a deployment that lost its signing key: nothing can be sent, and nothing
 * was — every call is `not_sent`, so the drive job tries again once the key is back.
 */
const notConfigured = (): Promise<AcquirerResult> =>
  Promise.resolve({ outcome: 'not_sent', reason: 'Clearhaus is not configured on this deployment (CLEARHAUS_SIGNING_KEY_ID and CLEARHAUS_SIGNING_KEY_FILE)' });
const UNCONFIGURED: Acquirer = {
  name: 'clearhaus',
  callTimeoutMs: 0,
  seriesReferences: false,
  partialVoids: true,
  voidsAfterCapture: true,
  isRepeatable: () => true,
  authorize: notConfigured,
  capture: notConfigured,
  refund: notConfigured,
  void: notConfigured,
  renew: notConfigured,
  payout: notConfigured,
};
