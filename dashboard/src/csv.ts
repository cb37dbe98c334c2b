/**
 * CSV built in the page (settlement fees): RFC 4180 fields, and a value a spreadsheet would run
 * as a formula (`= + - @`, tab, CR) gets a leading `'` — the rule of src/dashboard/csv-export.ts.
 * Negative amounts are numbers, not formulas, so they are left as they are.
 */
export function csvField(value: unknown): string {
  let text = value === null || value === undefined ? '' : String(value);
  if (/^[=+\-@\t\r]/.test(text) && !/^-\d+(\.\d+)?$/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export const csvLine = (values: unknown[]): string => values.map(csvField).join(',') + '\r\n';
