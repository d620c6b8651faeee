import { randomUUID } from 'node:crypto';
import type { ToolExecutionContext } from '@veetbot/ports';
import { workspaceHandle } from './temp-workspace';

/**
 * A ToolExecutionContext for unit tests. Everything a builtin may reach is real enough to
 * exercise it; the artifact writer and credential resolver refuse, because no builtin here
 * may use them and a test should notice if one starts to.
 */
export interface FakeContextOptions {
  readonly workspaceRoot?: string | null;
  readonly maximumOutputBytes?: number;
  readonly idempotencyKey?: string;
  readonly signal?: AbortSignal;
  /** Runs inside markEffectSent on every call, before it returns (e.g. a file-system snapshot). */
  readonly onMarkEffectSent?: () => void | Promise<void>;
}

export interface FakeContext {
  readonly context: ToolExecutionContext;
  /** Ordered record of what the tool did through the context. */
  readonly events: string[];
  markEffectSentCalls(): number;
}

export function createFakeContext(options: FakeContextOptions = {}): FakeContext {
  const events: string[] = [];
  let marks = 0;
  const context: ToolExecutionContext = {
    invocationId: randomUUID(),
    callId: 'call_test_1',
    runId: randomUUID(),
    sessionId: randomUUID(),
    tenantId: 'tenant_test',
    principal: { tenant_id: 'tenant_test', principal_id: 'principal_test', scopes: ['workspace.read', 'workspace.write', 'demo.write'] },
    stepNumber: 1,
    attemptNumber: 1,
    idempotencyKey: options.idempotencyKey ?? 'a'.repeat(64),
    deadlineAt: new Date(Date.now() + 30_000),
    timeoutSeconds: 30,
    maximumOutputBytes: options.maximumOutputBytes ?? 65_536,
    target: { kind: 'in_process', serverId: null, deviceId: null },
    workspace: options.workspaceRoot === null ? null : workspaceHandle(options.workspaceRoot ?? '/nonexistent-workspace/x/y'),
    artifacts: {
      write: () => Promise.reject(new Error('builtins in this package write no artifacts')),
    },
    credentials: {
      resolve: () => Promise.reject(new Error('builtins in this package resolve no credentials')),
    },
    cancellation: options.signal ?? new AbortController().signal,
    async markEffectSent() {
      marks += 1;
      events.push('markEffectSent');
      await options.onMarkEffectSent?.();
    },
  };
  return { context, events, markEffectSentCalls: () => marks };
}
