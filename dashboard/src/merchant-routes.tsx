/** The merchant tier's views beyond payments and overview: hash path → view, and their nav links. */
import type { VNode } from 'preact';
import { AgreementDetail, Agreements } from './agreements';
import { ApiKeys } from './keys';
import { Links } from './links';
import { SettlementDetail, Settlements } from './settlements';
import { SubscriptionDetail, Subscriptions } from './subscriptions';
import { PointOfSaleDetail, PointsOfSale, TerminalDetail } from './terminals';
import { WebhookDetail, Webhooks } from './webhooks';

export const MERCHANT_NAV: Array<[path: string, label: string]> = [
  ['/subscriptions', 'Subscriptions'],
  ['/agreements', 'Billing agreements'],
  ['/links', 'Payment links'],
  ['/webhooks', 'Webhooks'],
  ['/settlements', 'Settlements'],
  ['/keys', 'API keys'],
  ['/points-of-sale', 'Points of sale'],
];

const LISTS: Record<string, () => VNode> = {
  '/subscriptions': () => <Subscriptions />,
  '/agreements': () => <Agreements />,
  '/links': () => <Links />,
  '/webhooks': () => <Webhooks />,
  '/settlements': () => <Settlements />,
  '/keys': () => <ApiKeys />,
  '/points-of-sale': () => <PointsOfSale />,
};

const DETAILS: Record<string, (id: string) => VNode> = {
  '/subscriptions': (id) => <SubscriptionDetail id={id} />,
  '/agreements': (id) => <AgreementDetail id={id} />,
  '/webhooks': (id) => <WebhookDetail id={id} />,
  '/settlements': (id) => <SettlementDetail id={id} />,
  '/points-of-sale': (id) => <PointOfSaleDetail id={id} />,
  '/terminals': (id) => <TerminalDetail id={id} />,
};

/** The view of `path`, or null when it is not one of these (payments and overview stay in main.tsx). */
export function merchantView(path: string): VNode | null {
  const list = LISTS[path];
  if (list) return list();
  const match = /^(\/[a-z-]+)\/([^/]+)$/.exec(path);
  const detail = match ? DETAILS[match[1]!] : undefined;
  // A key keeps one detail's state from leaking into the next one opened.
  return detail ? <div key={path}>{detail(decodeURIComponent(match![2]!))}</div> : null;
}

/** The nav entry a path belongs to (details count as their list). */
export const navSection = (path: string): string => (path.startsWith('/terminals') ? '/points-of-sale' : '/' + (path.split('/')[1] ?? ''));
