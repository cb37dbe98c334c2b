/**
 * A callback receiver in a worker thread (receiver-worker.mjs): the URL to give as
 * notificationUrl, and the arrival time of every callback by its path.
 */
import { Worker } from 'node:worker_threads';

export interface Arrivals {
  /** Per callback: the `<seq>` of its path `/<prefix>/<seq>`, the prefix, and when it had arrived (epoch ms). */
  seqs: string[];
  prefixes: string[];
  times: Float64Array;
  /** Callbacks received since the start, and of those the ones not reporting SUCCESS. */
  total: number;
  notSuccess: number;
}

export interface Receiver {
  /** The notificationUrl for a `{seq}` template: `http://127.0.0.1:<port>/<prefix>/{seq}`. */
  url(prefix: string): string;
  /** Callbacks arrived since the last take. */
  take(): Promise<Arrivals>;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const worker = new Worker(new URL('./receiver-worker.mjs', import.meta.url));
  const next = <T>(type: string): Promise<T> =>
    new Promise((resolve, reject) => {
      const onMessage = (m: { type: string }) => {
        if (m.type !== type) return;
        worker.off('message', onMessage);
        worker.off('error', reject);
        resolve(m as T);
      };
      worker.on('message', onMessage);
      worker.once('error', reject);
    });
  const { port } = await next<{ port: number }>('listening');
  return {
    url: (prefix) => `http://127.0.0.1:${port}/${prefix}/{seq}`,
    async take() {
      const taken = next<Arrivals>('taken');
      worker.postMessage({ type: 'take' });
      return taken;
    },
    async close() {
      const closed = next('closed');
      worker.postMessage({ type: 'close' });
      await closed;
      await worker.terminate();
    },
  };
}
