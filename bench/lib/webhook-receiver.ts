/**
 * Webhook receivers in a worker thread (webhook-receiver-worker.mjs): one local HTTP endpoint per
 * webhook, and the arrival time of every delivery with its event id.
 */
import { Worker } from 'node:worker_threads';

export interface Arrivals {
  /** Per request, in arrival order: its X-Event-Id and when its body had arrived (epoch ms). */
  eventIds: string[];
  times: Float64Array;
  received: number;
  /** Requests whose X-Delivery-Id had arrived before (a delivery sent twice). */
  duplicates: number;
}

export interface WebhookReceivers {
  /** One URL per server: `http://localhost:<port>/hook`. */
  urls: string[];
  /** Resolves when `count` requests have arrived (counted from this call), or rejects after `timeoutMs`. */
  expect(count: number, timeoutMs: number): { arrived: Promise<Arrivals> };
  close(): Promise<void>;
}

type Message = { type: 'ready'; ports: number[] } | ({ type: 'done' | 'taken' } & Arrivals);

export async function startWebhookReceivers(servers: number): Promise<WebhookReceivers> {
  const worker = new Worker(new URL('./webhook-receiver-worker.mjs', import.meta.url), { workerData: { servers }, execArgv: [] });
  const next = (types: string[]): Promise<Message> =>
    new Promise((resolve, reject) => {
      const onMessage = (m: Message) => {
        if (!types.includes(m.type)) return;
        worker.off('message', onMessage);
        worker.off('error', reject);
        resolve(m);
      };
      worker.on('message', onMessage);
      worker.once('error', reject);
    });
  const ready = (await next(['ready'])) as { type: 'ready'; ports: number[] };
  return {
    urls: ready.ports.map((port) => `http://localhost:${port}/hook`),
    expect(count, timeoutMs) {
      worker.postMessage({ type: 'expect', count });
      const arrived = (async () => {
        let timer: NodeJS.Timeout | undefined;
        const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), timeoutMs)));
        const done = next(['done']);
        const first = await Promise.race([done, timeout]);
        clearTimeout(timer);
        if (first !== 'timeout') return first as Arrivals;
        const taken = next(['taken']);
        worker.postMessage({ type: 'take' });
        const partial = (await taken) as Arrivals;
        throw new Error(`only ${partial.received} of ${count} webhook requests arrived within ${timeoutMs / 1000} s`);
      })();
      return { arrived };
    },
    async close() {
      await worker.terminate();
    },
  };
}
