import { VeetbotError } from '@veetbot/domain';
import type { PendingStep } from '@veetbot/ports';
import type { WorkerLoopEvent } from '@veetbot/runtime';

/**
 * One line per thing that happened, identity and codes only: never arguments, results or
 * error text from a tool (§ Events and telemetry: "The event carries identity and
 * classification"). Errors go to stderr, the rest to stdout.
 */
export interface LineSink {
  info(line: string): void;
  error(line: string): void;
}

export const consoleSink: LineSink = {
  info: (line) => process.stdout.write(`${line}\n`),
  error: (line) => process.stderr.write(`${line}\n`),
};

const stepOf = (s: PendingStep): string => `tenant=${s.tenantId} run=${s.runId} step=${s.stepNumber}`;
const codeOf = (error: unknown): string => (VeetbotError.isInstance(error) ? error.code : error instanceof Error ? error.name : 'unknown');

export function logEvent(sink: LineSink, event: WorkerLoopEvent): void {
  switch (event.kind) {
    case 'step_ran': {
      const { outcome } = event;
      const statuses = outcome.items.map((i) => i.outcome.status);
      const count = (status: string) => statuses.filter((s) => s === status).length;
      sink.info(
        `step ran ${stepOf(event.step)} calls=${statuses.length} succeeded=${count('succeeded')} failed=${count('failed')} denied=${count('denied')} uncertain=${count('uncertain')} pending_approvals=${outcome.pendingApprovals.length}${outcome.runFailed === null ? '' : ` run_failed=${outcome.runFailed}`}`,
      );
      return;
    }
    case 'step_busy':
      sink.info(`step busy ${stepOf(event.step)}: another worker holds the run`);
      return;
    case 'step_over_quota':
      sink.info(`step over quota ${stepOf(event.step)}: left pending until the tenant drops below its quota`);
      return;
    case 'step_refused':
      sink.info(`step refused ${stepOf(event.step)} code=${event.error.code}`);
      return;
    case 'step_unreadable':
      sink.error(`step unreadable ${stepOf(event.step)}: the stored batch does not parse`);
      return;
    case 'step_failed':
      sink.error(`step failed ${stepOf(event.step)} code=${codeOf(event.error)} (will retry)`);
      return;
    case 'notify_failed':
      sink.error(`notify failed ${stepOf(event.step)} code=${codeOf(event.error)}`);
      return;
    case 'claim_failed':
      sink.error(`claim failed code=${codeOf(event.error)} (will retry)`);
      return;
    case 'sweep_ran': {
      const r = event.report;
      // A quiet pass is not news.
      if (r.examined > 0)
        sink.info(`sweep examined=${r.examined} recovered=${r.recovered} uncertain=${r.uncertain} failed=${r.failed} skipped=${r.skipped}`);
      return;
    }
    case 'sweep_failed':
      sink.error(`sweep failed code=${codeOf(event.error)} (will retry)`);
      return;
  }
}
