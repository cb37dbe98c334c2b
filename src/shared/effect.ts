/**
 * The Idempotency-Key of a request as its use case sees it (INTERFACE §4). `key` tags what the
 * request creates, in the same commit. `resumed` is true only when a retry resumes an execution
 * cut off by a crash: the one case in which records tagged with `key` can exist already, so the
 * one case in which a use case looks for them (a fresh request pays no extra read).
 */
export interface Effect {
  key: string;
  resumed: boolean;
}

/** The effect of part `n` of a request that creates several things (batch entries, refund parts). */
export const effectPart = (effect: Effect | null, n: number): Effect | null => effect && { key: `${effect.key}#${n}`, resumed: effect.resumed };
