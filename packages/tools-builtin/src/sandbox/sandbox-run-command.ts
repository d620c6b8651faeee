import { type ArtifactRef, sandboxEndingFailure, type ToolResultInput } from '@veetbot/domain';
import type { Sandbox, SandboxLimits, SandboxResult, Tool, ToolExecutionContext } from '@veetbot/ports';
import { defineBuiltinSpec, JSON_SCHEMA_DIALECT } from '../builtin-spec';
import { NO_WORKSPACE, toolFailure, toolSuccess } from '../tool-result-helpers';

export const RUN_COMMAND_MAX_ARGS = 64;
export const RUN_COMMAND_MAX_ARG_LENGTH = 65_536;
export const RUN_COMMAND_MAX_STDIN = 1_048_576;
/** The spec's ceiling on a call; the model may ask for less with timeout_seconds. */
export const RUN_COMMAND_TIMEOUT_SECONDS = 120;
/** What one run may use (docs/adr/0037); the wall clock comes from the call. */
export const RUN_COMMAND_LIMITS: Omit<SandboxLimits, 'wallSeconds' | 'cpuSeconds' | 'outputBytes'> = {
  memoryBytes: 1024 * 1024 * 1024,
  processes: 256,
};
/** Seconds kept back from the call's deadline, so the sandbox's own clock ends the run first. */
const DEADLINE_MARGIN_SECONDS = 1;

export const sandboxRunCommandSpec = defineBuiltinSpec({
  name: 'sandbox.run_command',
  version: '1.0.0',
  description:
    "Run a program in an isolated sandbox with the run's workspace as its working folder (/workspace, the only " +
    'writable place besides a private /tmp). No network. argv is executed directly, without a shell: use ' +
    '["sh", "-c", "..."] for one. A non-zero exit code is a result, not an error.',
  input_schema: {
    $schema: JSON_SCHEMA_DIALECT,
    type: 'object',
    properties: {
      argv: {
        type: 'array',
        minItems: 1,
        maxItems: RUN_COMMAND_MAX_ARGS,
        items: { type: 'string', maxLength: RUN_COMMAND_MAX_ARG_LENGTH },
        description: 'The program (a name on PATH or an absolute path) and its arguments.',
      },
      stdin: { type: 'string', maxLength: RUN_COMMAND_MAX_STDIN, description: 'Written to the program, then closed.' },
      timeout_seconds: { type: 'integer', minimum: 1, maximum: RUN_COMMAND_TIMEOUT_SECONDS },
    },
    required: ['argv'],
    additionalProperties: false,
  },
  output_schema: {
    $schema: JSON_SCHEMA_DIALECT,
    type: 'object',
    properties: {
      exit_code: { type: ['integer', 'null'] },
      signal: { type: ['string', 'null'] },
      stdout_bytes: { type: 'integer', minimum: 0 },
      stderr_bytes: { type: 'integer', minimum: 0 },
      duration_ms: { type: 'integer', minimum: 0 },
    },
    required: ['exit_code', 'signal', 'stdout_bytes', 'stderr_bytes', 'duration_ms'],
    additionalProperties: false,
  },
  // The program may change anything in the workspace, and running it twice is two runs.
  side_effect: 'workspace_write',
  risk: 'medium',
  idempotency: 'non_idempotent',
  required_scopes: ['sandbox.run'],
  timeout_seconds: RUN_COMMAND_TIMEOUT_SECONDS,
  // § Output: the bounded reader stops at 4x this (1 MiB, the global ceiling); step 12
  // excerpts and artifactizes anything above the inline limit.
  maximum_output_bytes: 262_144,
  allow_parallel: false,
  target_kind: 'sandbox',
  // § ToolSpec: generated code and its output are Untrusted (Section 22) — whatever it prints.
  output_trust: 'external_untrusted',
});

function render(result: SandboxResult): string {
  const status = result.signal === null ? `Exit code ${String(result.exitCode)}.` : `Ended by ${result.signal}.`;
  return `${status}\n--- stdout ---\n${result.stdout.text}\n--- stderr ---\n${result.stderr.text}`;
}

/** § Output: "its partial output is still artifactized". Best effort: the failure stands either way. */
async function keepPartialOutput(ctx: ToolExecutionContext, result: SandboxResult): Promise<ArtifactRef | null> {
  try {
    return await ctx.artifacts.write({
      bytes: new TextEncoder().encode(render(result)),
      mediaType: 'text/plain; charset=utf-8',
      trust: 'external_untrusted',
    });
  } catch {
    return null;
  }
}

export interface SandboxRunCommandOptions {
  readonly sandbox: Sandbox;
}

export function createSandboxRunCommandTool(options: SandboxRunCommandOptions): Tool {
  return {
    spec: sandboxRunCommandSpec,
    async execute(args, ctx): Promise<ToolResultInput> {
      if (ctx.workspace === null) return NO_WORKSPACE();
      const argv = args.argv;
      if (!Array.isArray(argv) || argv.length === 0 || !argv.every((a): a is string => typeof a === 'string')) {
        return toolFailure('invalid_arguments', 'argv', 'argv must be a non-empty array of strings');
      }
      if (argv.some((a) => a.includes('\0'))) return toolFailure('invalid_arguments', 'argv', 'argv may not contain NUL');
      const requested = typeof args.timeout_seconds === 'number' ? args.timeout_seconds : ctx.timeoutSeconds;
      const remaining = (ctx.deadlineAt.getTime() - Date.now()) / 1000 - DEADLINE_MARGIN_SECONDS;
      const wallSeconds = Math.min(requested, ctx.timeoutSeconds, remaining);
      if (wallSeconds < 1) return toolFailure('timeout', 'sandbox', 'Less than a second is left before the deadline');
      if (ctx.cancellation.aborted) return toolFailure('internal', 'cancelled', 'Cancelled before the program started');

      // § Output: the hard ceiling is maximum_output_bytes * 4.
      const outputLimitBytes = ctx.maximumOutputBytes * 4;
      // § The effect watermark: the program may write the workspace from its first instruction.
      await ctx.markEffectSent();
      const result = await options.sandbox.run(
        {
          argv,
          workspaceHostPath: ctx.workspace.root,
          ...(typeof args.stdin === 'string' ? { stdin: args.stdin } : {}),
          limits: {
            ...RUN_COMMAND_LIMITS,
            wallSeconds,
            cpuSeconds: Math.max(1, Math.ceil(wallSeconds)),
            outputBytes: outputLimitBytes,
          },
        },
        ctx.cancellation,
      );
      switch (result.ending) {
        case 'exited':
          return toolSuccess(render(result), {
            exit_code: result.exitCode,
            signal: result.signal,
            stdout_bytes: result.stdout.totalBytes,
            stderr_bytes: result.stderr.totalBytes,
            duration_ms: result.durationMs,
          });
        case 'output_limit': {
          // The one ending where part of what the program wrote is kept for the operator.
          const ended = sandboxEndingFailure(result.ending, { durationMs: result.durationMs, outputLimitBytes, detail: result.detail });
          const artifact = await keepPartialOutput(ctx, result);
          const kept = artifact === null ? 'the partial output was not kept' : `partial output in artifact ${artifact.artifact_id}`;
          return ended.failure ? { ...ended, failure: { ...ended.failure, detail: `${ended.failure.detail}; ${kept}` } } : ended;
        }
        default:
          return sandboxEndingFailure(result.ending, { durationMs: result.durationMs, outputLimitBytes, detail: result.detail });
      }
    },
  };
}
