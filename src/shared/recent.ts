/**
 * The last few values met, newest first, searched one by one: for lookups whose key would cost more
 * to build than comparing the candidates (a statement's shapes, query-template.ts and bulk-insert.ts).
 */
export class Recent<T> {
  private readonly items: T[] = [];

  constructor(private readonly size: number) {}

  find(match: (item: T) => boolean): T | undefined {
    for (const item of this.items) if (match(item)) return item;
    return undefined;
  }

  /** Puts `item` first (the oldest goes past `size`); returns it. */
  add(item: T): T {
    this.items.unshift(item);
    if (this.items.length > this.size) this.items.pop();
    return item;
  }
}
