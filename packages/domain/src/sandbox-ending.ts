import { z } from 'zod';
import { type ToolResultInput, toolFailure } from './tool-result';

/**
 * How a sandboxed program ended (docs/adr/0037). `exited` is the only ending in which the
 * program finished by itself; every other one names the limit that ended it.
 */
export const SandboxEnding = z.enum([
  'exited',
  'timed_out',
  'cpu_limit',
  'memory_limit',
  'output_limit',
  'process_limit',
  'disk_limit',
  'cancelled',
  'failed_to_start',
]);
export type SandboxEnding = z.infer<typeof SandboxEnding>;

/** What the failure text may say about the run that ended. */
export interface SandboxEndingFacts {
  readonly durationMs: number;
  /** The bytes of output past which the sandbox was killed. */
  readonly outputLimitBytes: number;
  /**
   * Operator-facing, for failed_to_start: never put in the tenant's text (it may name a host
   * path; issue 23 item 3). The sandbox records it on its span.
   */
  readonly detail: string | null;
}

/**
 * The one mapping from a sandbox's limit endings to the tool failure the model reads — the same
 * reason codes for sandbox.run_command and sandbox.run_orchestration (docs/adr/0037, 0039).
 */
export function sandboxEndingFailure(ending: Exclude<SandboxEnding, 'exited'>, facts: SandboxEndingFacts): ToolResultInput {
  const ran = `after ${facts.durationMs} ms`;
  switch (ending) {
    case 'timed_out':
      return toolFailure('timeout', 'sandbox', `The program was killed at its wall-clock limit ${ran}`);
    case 'cpu_limit':
      return toolFailure('timeout', 'sandbox_cpu', `The program reached its CPU-time limit ${ran}`);
    case 'memory_limit':
      return toolFailure('internal', 'sandbox_memory', `The program ran out of its memory limit ${ran}`);
    case 'process_limit':
      return toolFailure('internal', 'sandbox_processes', `The program reached its process limit ${ran}`);
    case 'output_limit':
      return toolFailure(
        'output_too_large',
        'sandbox',
        `The program wrote more than ${facts.outputLimitBytes} bytes and was killed ${ran}`,
      );
    case 'disk_limit':
      return toolFailure('output_too_large', 'workspace_disk', `The program was killed at the workspace's disk limit ${ran}`);
    case 'cancelled':
      return toolFailure('internal', 'cancelled', `Cancelled; the sandbox was killed ${ran}`);
    case 'failed_to_start':
      return toolFailure('internal', 'sandbox_start', 'The sandbox did not start the program');
  }
}
