/**
 * One timer for the earliest of several deadlines (wall-clock ms): units that may wait until some
 * time (a lingering commit) arm it with their deadline, and it fires once, at the first of them.
 * Used by the SQLite group commit (sqlite/group-commit.ts) and PostgreSQL's joined statements
 * (postgres/shared-clients.ts).
 */
export class DeadlineTimer {
  private timer: NodeJS.Timeout | null = null;
  private at = Number.POSITIVE_INFINITY;

  constructor(private readonly fire: () => void) {}

  /** Fires at `at`, unless it is armed for an earlier time already. */
  arm(at: number): void {
    if (this.timer && this.at <= at) return;
    this.clear();
    this.at = at;
    this.timer = setTimeout(
      () => {
        this.timer = null;
        this.at = Number.POSITIVE_INFINITY;
        this.fire();
      },
      Math.max(0, at - Date.now()),
    );
  }

  clear(): void {
    if (!this.timer) return;
    clearTimeout(this.timer);
    this.timer = null;
    this.at = Number.POSITIVE_INFINITY;
  }
}
