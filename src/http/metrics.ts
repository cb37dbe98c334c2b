/** Prometheus metrics (prom-client): HTTP latency by route and status, plus gauges read at scrape time. */
import client from 'prom-client';

/** Period of the event-loop lag's sampling timer (nodejs_eventloop_lag_*). */
const EVENT_LOOP_SAMPLE_MS = 100;

export class Metrics {
  readonly registry = new client.Registry();
  private readonly requests: client.Histogram<'method' | 'route' | 'status'>;

  constructor() {
    // The event-loop lag is sampled by a timer of this period (prom-client's default, 10 ms, woke an
    // idle process 100 times a second: most of its wake-ups); 100 ms still gives a scrape every 15 s
    // its 150 samples.
    client.collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
    this.requests = new client.Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP request latency',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [this.registry],
    });
  }

  observeRequest(method: string, route: string, status: number, seconds: number): void {
    this.requests.observe({ method, route, status: String(status) }, seconds);
  }

  /** A gauge whose value is computed at scrape time (e.g. jobs by state). */
  gauge(name: string, help: string, labelNames: string[], collect: () => Promise<Array<{ labels: Record<string, string>; value: number }>>): void {
    new client.Gauge({
      name,
      help,
      labelNames,
      registers: [this.registry],
      async collect() {
        this.reset();
        for (const { labels, value } of await collect()) this.set(labels, value);
      },
    });
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  render(): Promise<string> {
    return this.registry.metrics();
  }
}
