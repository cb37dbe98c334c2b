/**
 * The operator's view of the job queue for the dashboard (issue 12): counts by kind and state,
 * the dead jobs (attempts exhausted) and their retry — what `payments jobs` / `payments jobs dead`
 * / `payments jobs retry` do on the command line, over the same JobStore. Operator key only;
 * outside the public API (hidden from OpenAPI), under /dashboard/api/operator/.
 */
import { Type } from '@sinclair/typebox';
import type { JobStore } from '../jobs/job.js';
import { notFound } from '../shared/errors.js';
import { defineRoute, type RouteDef } from '../shared/route.js';
import { DateTime, Nullable, Uuid } from '../shared/wire.js';

const DeadJob = Type.Object({
  id: Type.String(),
  kind: Type.String(),
  attempts: Type.Integer(),
  maxAttempts: Type.Integer(),
  lastError: Nullable(Type.String()),
  createdAt: DateTime,
  updatedAt: DateTime,
});

const JobsResponse = Type.Object({
  counts: Type.Array(Type.Object({ kind: Type.String(), state: Type.String(), count: Type.Integer() })),
  dead: Type.Array(DeadJob),
});

export const OPERATOR_JOBS_PATH = '/dashboard/api/operator/jobs';

export function operatorJobsRoutes(deps: { jobs: Pick<JobStore, 'countsByState' | 'listDead' | 'retryDead'>; now(): number }): RouteDef[] {
  const common = { auth: 'operator' as const, tags: ['Dashboard'], root: true, hidden: true };
  return [
    defineRoute({
      ...common,
      method: 'GET',
      url: OPERATOR_JOBS_PATH,
      summary: 'Jobs by kind and state, and the dead jobs (at most 200, newest first)',
      schema: { response: { 200: JobsResponse } },
      handler: async () => {
        const [counts, dead] = await Promise.all([deps.jobs.countsByState(), deps.jobs.listDead(200)]);
        return {
          counts,
          // Payloads stay out: they are the service's internals, not the operator's business here.
          dead: dead.map((j) => ({
            id: j.id,
            kind: j.kind,
            attempts: j.attempts,
            maxAttempts: j.maxAttempts,
            lastError: j.lastError === null ? null : j.lastError.slice(0, 500),
            createdAt: j.createdAt,
            updatedAt: j.updatedAt,
          })),
        };
      },
    }),
    defineRoute({
      ...common,
      method: 'POST',
      url: `${OPERATOR_JOBS_PATH}/:jobId/retry`,
      summary: 'Queue a dead job again with fresh attempts',
      schema: { params: Type.Object({ jobId: Uuid }), response: { 200: Type.Object({ success: Type.Boolean() }) } },
      handler: async ({ params }) => {
        if (!(await deps.jobs.retryDead(params.jobId, deps.now()))) throw notFound('dead job');
        return { success: true };
      },
    }),
  ];
}
