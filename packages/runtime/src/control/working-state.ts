import { canonicalJson, type ToolResultInput } from '@veetbot/domain';
import type { ToolExecutionContext, WorkingStateStore } from '@veetbot/ports';
import { WORKING_STATE_MAXIMUM_BYTES } from './control-specs';

/**
 * context.update_working_state (§ Control tools; context-engine.md): the run's working-state
 * document, bounded and versioned. The write is keyed by the invocation, so a recovered attempt
 * answers the version its first attempt wrote. Readable through GET /v1/runs/{id}/working-state.
 */
export async function updateWorkingState(
  store: WorkingStateStore,
  args: Record<string, unknown>,
  context: ToolExecutionContext,
  now: Date,
): Promise<ToolResultInput> {
  const document = args.document as Record<string, unknown>;
  const bytes = new TextEncoder().encode(canonicalJson(document)).length;
  if (bytes > WORKING_STATE_MAXIMUM_BYTES) {
    return failure(
      'tool.invalid_arguments.working_state_too_large',
      `The document is ${bytes} bytes; the limit is ${WORKING_STATE_MAXIMUM_BYTES}.`,
    );
  }
  const expectedVersion = typeof args.expected_version === 'number' ? args.expected_version : undefined;
  const written = await store.append(context.tenantId, {
    runId: context.runId,
    document,
    invocationId: context.invocationId,
    createdAt: now,
    ...(expectedVersion === undefined ? {} : { expectedVersion }),
  });
  if (written.kind === 'version_conflict') {
    return failure('tool.invalid_arguments.working_state_version', `The latest version is ${written.latest}.`, {
      latest_version: written.latest,
    });
  }
  const { version } = written.row;
  return {
    ok: true,
    content: [{ type: 'text', text: `Working state saved as version ${version} (${bytes} bytes).` }],
    structured: { version, bytes },
    output_trust: 'platform',
  };
}

function failure(reasonCode: string, detail: string, structured: Record<string, unknown> | null = null): ToolResultInput {
  return {
    ok: false,
    content: [{ type: 'text', text: detail }],
    structured,
    failure: { kind: 'invalid_arguments', reason_code: reasonCode, detail, retryable: false },
    output_trust: 'platform',
  };
}
