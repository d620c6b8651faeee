import { CanonicalizationError, canonicalJson, sha256Hex, type ToolSpec } from '@veetbot/domain';
import { concludeWithoutExecution, proceed, stop, type StepResult } from '../render-item';

export interface NormalizedArguments {
  readonly canonical: string;
  readonly hash: string;
}

/**
 * Step 5: the canonical form of the validated document (defaults applied) and its sha256.
 * NaN, ±Infinity, -0, lone surrogates and NFC key collisions are invalid arguments.
 */
export function normalizeArguments(
  spec: ToolSpec,
  args: Record<string, unknown>,
  maximumBytes: number,
  callId: string,
): StepResult<NormalizedArguments> {
  let canonical: string;
  try {
    canonical = canonicalJson(args);
  } catch (error) {
    if (error instanceof CanonicalizationError) {
      return stop(
        concludeWithoutExecution(callId, spec.name, 'tool.arguments_invalid', 'failed', [
          `Arguments have no canonical form at ${error.path === '' ? 'the root' : error.path} (${error.code}).`,
        ]),
      );
    }
    throw error;
  }
  const bytes = Buffer.byteLength(canonical, 'utf8');
  if (bytes > maximumBytes) {
    return stop(
      concludeWithoutExecution(callId, spec.name, 'tool.arguments_invalid', 'failed', [
        `Arguments are ${bytes} bytes; the limit is ${maximumBytes}.`,
      ]),
    );
  }
  return proceed({ canonical, hash: sha256Hex(canonical) });
}
