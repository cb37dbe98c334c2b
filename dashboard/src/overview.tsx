import { useEffect, useRef, useState } from 'preact/hooks';
import { BarController, BarElement, CategoryScale, Chart, Legend, LinearScale, Tooltip } from 'chart.js';
import { api } from './api';
import { exponentOf, money, plural } from './format';
import type { CursorPage, Transaction } from './types';
import { summarize, type OverviewFigures } from './figures';

Chart.register(BarController, BarElement, CategoryScale, LinearScale, Legend, Tooltip);

/** At most this many transactions are read for the overview (pages of 500). */
const MAX_ROWS = 5000;

const isoDay = (d: Date) => d.toISOString().slice(0, 10);

export function Overview() {
  const [from, setFrom] = useState(isoDay(new Date(Date.now() - 29 * 86400_000)));
  const [to, setTo] = useState(isoDay(new Date()));
  const [figures, setFigures] = useState<OverviewFigures | null>(null);
  const [truncated, setTruncated] = useState(false);
  const [progress, setProgress] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [currency, setCurrency] = useState<string>('');

  async function load() {
    setError(null);
    setProgress('Loading…');
    try {
      const rows: Transaction[] = [];
      let offset = '';
      let more = true;
      while (more && rows.length < MAX_ROWS) {
        const q = new URLSearchParams({ perPage: '500', createdAfter: `${from}T00:00:00.000Z`, createdBefore: `${to}T23:59:59.999Z` });
        if (offset) q.set('offset', offset);
        const page = await api.get<CursorPage<{ transaction: Transaction }>>(`/transactions?${q}`);
        rows.push(...page.items.map((i) => i.transaction));
        setProgress(`Loading… ${plural(rows.length, 'payment')}`);
        more = page.hasMore && page.nextOffset !== null;
        offset = page.nextOffset ?? '';
      }
      const f = summarize(rows);
      setTruncated(more);
      setFigures(f);
      setCurrency((c) => c || f.byCurrency[0]?.[0] || '');
      setProgress(null);
    } catch (e) {
      setProgress(null);
      setError((e as Error).message);
    }
  }
  useEffect(() => {
    void load();
  }, []);

  return (
    <section aria-labelledby="overview-title">
      <h1 id="overview-title">Overview</h1>
      <form
        class="filters"
        onSubmit={(e) => {
          e.preventDefault();
          void load();
        }}
      >
        <label>
          From
          <input type="date" value={from} onInput={(e) => setFrom((e.currentTarget as HTMLInputElement).value)} required />
        </label>
        <label>
          To
          <input type="date" value={to} onInput={(e) => setTo((e.currentTarget as HTMLInputElement).value)} required />
        </label>
        {figures && figures.byCurrency.length > 1 && (
          <label>
            Volume in
            <select value={currency} onChange={(e) => setCurrency((e.currentTarget as HTMLSelectElement).value)}>
              {figures.byCurrency.map(([c]) => (
                <option value={c}>{c}</option>
              ))}
            </select>
          </label>
        )}
        <button type="submit">Show</button>
        {progress && (
          <span role="status" aria-live="polite">
            {progress}
          </span>
        )}
      </form>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {figures && figures.total === 0 && <p class="empty">No payments in this range.</p>}
      {figures && figures.total > 0 && (
        <>
          {truncated && <p class="hint">Only the newest {MAX_ROWS} payments of the range are counted.</p>}
          <p>
            <strong>{figures.total}</strong> {figures.total === 1 ? 'payment' : 'payments'}, success rate{' '}
            <strong>{figures.successRate === null ? '—' : `${(figures.successRate * 100).toFixed(1)} %`}</strong>
          </p>
          <div class="chart-row">
            <BarChart
              label="Payments per day"
              labels={figures.days.map((d) => d.day)}
              series={[
                { label: 'Succeeded', data: figures.days.map((d) => d.succeeded), color: '#2e7d32' },
                { label: 'Failed', data: figures.days.map((d) => d.failed), color: '#c62828' },
              ]}
            />
            <table>
              <caption>Per day</caption>
              <thead>
                <tr>
                  <th scope="col">Day</th>
                  <th scope="col" class="num">
                    Count
                  </th>
                  <th scope="col" class="num">
                    Succeeded
                  </th>
                  <th scope="col" class="num">
                    Volume
                  </th>
                </tr>
              </thead>
              <tbody>
                {figures.days.map((d) => (
                  <tr key={d.day}>
                    <td>{d.day}</td>
                    <td class="num">{d.count}</td>
                    <td class="num">{d.succeeded}</td>
                    <td class="num">{money(d.volume[currency] ?? 0, currency)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <div class="chart-row">
            <BarChart
              label={`Volume per day (${currency})`}
              labels={figures.days.map((d) => d.day)}
              series={[
                {
                  label: `Volume ${currency}`,
                  data: figures.days.map((d) => (d.volume[currency] ?? 0) / 10 ** exponentOf(currency)),
                  color: '#1565c0',
                },
              ]}
            />
            <table>
              <caption>Top decline reasons</caption>
              <tbody>
                {figures.declines.length === 0 ? (
                  <tr>
                    <td>No declines</td>
                  </tr>
                ) : (
                  figures.declines.map(([reason, n]) => (
                    <tr key={reason}>
                      <td>{reason}</td>
                      <td class="num">{n}</td>
                    </tr>
                  ))
                )}
              </tbody>
            </table>
          </div>
          <div class="chart-row">
            <table>
              <caption>By payment method</caption>
              <tbody>
                {figures.byMethod.map(([m, n]) => (
                  <tr key={m}>
                    <td>{m}</td>
                    <td class="num">{n}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            <table>
              <caption>By currency</caption>
              <tbody>
                {figures.byCurrency.map(([c, n, vol]) => (
                  <tr key={c}>
                    <td>{c}</td>
                    <td class="num">{n}</td>
                    <td class="num">{money(vol, c)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
    </section>
  );
}

function BarChart({ label, labels, series }: { label: string; labels: string[]; series: Array<{ label: string; data: number[]; color: string }> }) {
  const canvas = useRef<HTMLCanvasElement>(null);
  useEffect(() => {
    if (!canvas.current) return;
    const chart = new Chart(canvas.current, {
      type: 'bar',
      data: { labels, datasets: series.map((s) => ({ label: s.label, data: s.data, backgroundColor: s.color })) },
      options: { animation: false, responsive: true, maintainAspectRatio: false, scales: { x: { stacked: true }, y: { stacked: true, beginAtZero: true } } },
    });
    return () => chart.destroy();
  }, [labels.join(), JSON.stringify(series)]);
  return (
    <figure class="chart">
      <figcaption>{label}</figcaption>
      <div class="canvas-box">
        <canvas ref={canvas} role="img" aria-label={`${label}; the numbers are in the table beside it`} />
      </div>
    </figure>
  );
}
