import { VeetbotError } from '@veetbot/domain';
import type { PendingStep } from '@veetbot/ports';
import type { WorkerLoopEvent } from '@veetbot/runtime';
import type { Log, LogFields } from '@veetbot/telemetry';

/**
 * One log line per thing the worker loop did (docs/adr/0069), identity and codes only: never
 * arguments, results or error text from a tool (§ Events and telemetry: "The event carries
 * identity and classification"). A step's line carries its tenant, run and step number, and
 * the trace id of the api request that stored it.
 */
const stepFields = (s: PendingStep): LogFields => ({ tenant_id: s.tenantId, run_id: s.runId, step_number: s.stepNumber });

export function logEvent(log: Log, event: WorkerLoopEvent): void {
  switch (event.kind) {
    case 'step_ran': {
      const { outcome } = event;
      const statuses = outcome.items.map((i) => i.outcome.status);
      const count = (status: string) => statuses.filter((s) => s === status).length;
      log.info('step ran', {
        ...stepFields(event.step),
        traceparent: event.traceContext?.traceparent ?? null,
        calls: statuses.length,
        succeeded: count('succeeded'),
        failed: count('failed'),
        denied: count('denied'),
        uncertain: count('uncertain'),
        pending_approvals: outcome.pendingApprovals.length,
        ...(outcome.runFailed === null ? {} : { run_failed: outcome.runFailed }),
      });
      return;
    }
    case 'step_busy':
      log.info('step busy: another worker holds the run', stepFields(event.step));
      return;
    case 'step_over_quota':
      log.info('step over quota: left pending until the tenant drops below its quota', stepFields(event.step));
      return;
    case 'step_refused':
      log.info('step refused', { ...stepFields(event.step), code: event.error.code });
      return;
    case 'step_unreadable':
      log.error('step unreadable: the stored batch does not parse', stepFields(event.step));
      return;
    case 'step_failed':
      log.error('step failed (will retry)', { ...stepFields(event.step), code: codeOf(event.error) });
      return;
    case 'notify_failed':
      log.error('notify failed', { ...stepFields(event.step), code: codeOf(event.error) });
      return;
    case 'claim_failed':
      log.error('claim failed (will retry)', { code: codeOf(event.error) });
      return;
    case 'sweep_ran': {
      const r = event.report;
      // A quiet pass is not news.
      if (r.examined > 0)
        log.info('sweep ran', {
          examined: r.examined,
          recovered: r.recovered,
          uncertain: r.uncertain,
          failed: r.failed,
          skipped: r.skipped,
        });
      return;
    }
    case 'sweep_failed':
      log.error('sweep failed (will retry)', { code: codeOf(event.error) });
      return;
  }
}

/** An error's stable code (a VeetbotError's) or class name: never its message (it may quote a tool's output). */
function codeOf(error: unknown): string {
  return VeetbotError.isInstance(error) ? error.code : error instanceof Error ? error.name : 'unknown';
}
