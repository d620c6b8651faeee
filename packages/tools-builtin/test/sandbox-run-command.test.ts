import { isKnownReasonCode, reasonCodeEntry, ToolResult } from '@veetbot/domain';
import type { Sandbox, SandboxEnding, SandboxRequest, SandboxResult } from '@veetbot/ports';
import { describe, expect, it } from 'vitest';
import { createBuiltinTools, SANDBOX_TOOL_NAMES } from '../src/builtin-tools';
import { createSandboxRunCommandTool, sandboxRunCommandSpec } from '../src/sandbox/sandbox-run-command';
import { createFakeContext } from './fake-context';

/** A Sandbox port that records the request and ends as told (the real one: sandbox-adapter's tests). */
function scripted(ending: SandboxEnding, events: string[] = []): Sandbox & { requests: SandboxRequest[] } {
  const requests: SandboxRequest[] = [];
  return {
    requests,
    availability: () => Promise.resolve({ available: true }),
    run(request): Promise<SandboxResult> {
      events.push('run');
      requests.push(request);
      return Promise.resolve({
        ending,
        exitCode: ending === 'exited' ? 3 : null,
        signal: null,
        stdout: { text: 'out', totalBytes: 3, truncated: false },
        stderr: { text: 'err', totalBytes: 3, truncated: false },
        durationMs: 12,
        detail: ending === 'failed_to_start' ? 'bwrap: no' : null,
      });
    },
  };
}

describe('sandbox.run_command', () => {
  it('exists only when the composition hands createBuiltinTools a sandbox', () => {
    expect(createBuiltinTools().map((t) => t.spec.name)).not.toContain('sandbox.run_command');
    const names = createBuiltinTools({ sandbox: scripted('exited') }).map((t) => t.spec.name);
    expect(names.slice(-SANDBOX_TOOL_NAMES.length)).toEqual([...SANDBOX_TOOL_NAMES]);
  });

  it('is a sandbox-target builtin whose output is untrusted, and it cannot be retried blindly', () => {
    expect(sandboxRunCommandSpec).toMatchObject({
      target_kind: 'sandbox',
      source: 'builtin',
      output_trust: 'external_untrusted',
      side_effect: 'workspace_write',
      idempotency: 'non_idempotent',
    });
  });

  it('marks the effect before the program starts, and passes the workspace and the hard output ceiling', async () => {
    const { context, events } = createFakeContext({ workspaceRoot: '/tmp/ws', maximumOutputBytes: 1000 });
    const sandbox = scripted('exited', events);
    const result = ToolResult.parse(
      await createSandboxRunCommandTool({ sandbox }).execute({ argv: ['sh', '-c', 'exit 3'], stdin: 'in', timeout_seconds: 5 }, context),
    );
    expect(events).toEqual(['markEffectSent', 'run']);
    expect(sandbox.requests[0]).toMatchObject({ argv: ['sh', '-c', 'exit 3'], workspaceHostPath: '/tmp/ws', stdin: 'in' });
    expect(sandbox.requests[0]?.limits.outputBytes).toBe(4000);
    expect(sandbox.requests[0]?.limits.wallSeconds).toBe(5);
    // A non-zero exit is a result the model reads, not a failure.
    expect(result.ok).toBe(true);
    expect(result.structured).toMatchObject({ exit_code: 3, stdout_bytes: 3, stderr_bytes: 3 });
    expect(result.content[0]).toEqual({ type: 'text', text: 'Exit code 3.\n--- stdout ---\nout\n--- stderr ---\nerr' });
  });

  it('never asks for more wall time than the call has left', async () => {
    const { context } = createFakeContext({ workspaceRoot: '/tmp/ws' });
    const sandbox = scripted('exited');
    await createSandboxRunCommandTool({ sandbox }).execute({ argv: ['true'], timeout_seconds: 120 }, context);
    // The fake context's deadline is 30 s away; a second is kept back.
    expect(sandbox.requests[0]?.limits.wallSeconds).toBeLessThanOrEqual(29);
  });

  it.each([
    ['timed_out', 'tool.timeout.sandbox'],
    ['cpu_limit', 'tool.timeout.sandbox_cpu'],
    ['memory_limit', 'tool.internal.sandbox_memory'],
    ['process_limit', 'tool.internal.sandbox_processes'],
    ['output_limit', 'tool.output_too_large.sandbox'],
    ['failed_to_start', 'tool.internal.sandbox_start'],
    ['cancelled', 'tool.internal.cancelled'],
  ] as const)('a %s ending fails with the stable code %s, which has a fixed message', async (ending, code) => {
    const { context } = createFakeContext({ workspaceRoot: '/tmp/ws' });
    const result = ToolResult.parse(await createSandboxRunCommandTool({ sandbox: scripted(ending) }).execute({ argv: ['x'] }, context));
    expect(result.ok).toBe(false);
    expect(result.failure?.reason_code).toBe(code);
    expect(isKnownReasonCode(code)).toBe(true);
    expect(reasonCodeEntry(code)?.status).toBe('failed');
  });
});
