import { createHash } from 'node:crypto';
import type { ToolResultInput } from '@veetbot/domain';
import type { Tool } from '@veetbot/ports';
import { defineBuiltinSpec, JSON_SCHEMA_DIALECT } from '../builtin-spec';
import { NO_WORKSPACE, toolFailure, toolSuccess } from '../tool-result-helpers';
import { confineWorkspacePath, WORKSPACE_PATH_MAX_LENGTH, workspaceFileFailure } from './workspace-path';

/** Code points, as JSON Schema counts maxLength: at most 4 MiB once encoded as UTF-8. */
export const WRITE_TEXT_MAX_LENGTH = 1_048_576;

export type WriteMode = 'overwrite' | 'create';

export const workspaceWriteTextSpec = defineBuiltinSpec({
  name: 'workspace.write_text',
  version: '1.0.0',
  description:
    "Write a UTF-8 text file in the run's workspace, replacing it atomically. Parent directories are created. " +
    'mode "create" refuses to replace a file with different content.',
  input_schema: {
    $schema: JSON_SCHEMA_DIALECT,
    type: 'object',
    properties: {
      path: {
        type: 'string',
        minLength: 1,
        maxLength: WORKSPACE_PATH_MAX_LENGTH,
        description: 'Relative to the workspace root, "/"-separated.',
      },
      text: { type: 'string', maxLength: WRITE_TEXT_MAX_LENGTH },
      mode: { type: 'string', enum: ['overwrite', 'create'], default: 'overwrite' },
    },
    required: ['path', 'text'],
    additionalProperties: false,
  },
  output_schema: {
    $schema: JSON_SCHEMA_DIALECT,
    type: 'object',
    properties: {
      path: { type: 'string' },
      bytes_written: { type: 'integer', minimum: 0 },
      created: { type: 'boolean' },
      unchanged: { type: 'boolean' },
      sha256: { type: 'string', pattern: '^[0-9a-f]{64}$' },
    },
    required: ['path', 'bytes_written', 'created', 'unchanged', 'sha256'],
    additionalProperties: false,
  },
  side_effect: 'workspace_write',
  risk: 'medium',
  // The same path and text leave the same state however often they are applied: overwrite
  // replaces with identical bytes, and create accepts a file that already holds them.
  idempotency: 'idempotent',
  required_scopes: ['workspace.write'],
  timeout_seconds: 30,
  maximum_output_bytes: 4_096,
  allow_parallel: false,
  output_trust: 'internal_tool',
});

const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

export function createWorkspaceWriteTextTool(): Tool {
  return {
    spec: workspaceWriteTextSpec,
    async execute(args, ctx): Promise<ToolResultInput> {
      if (ctx.workspace === null) return NO_WORKSPACE();
      const mode: WriteMode = args.mode === 'create' ? 'create' : 'overwrite';
      const text = args.text;
      if (typeof text !== 'string') return toolFailure('invalid_arguments', 'text', 'text must be a string');

      const confined = confineWorkspacePath(String(args.path));
      if (!confined.ok) return confined.failure;
      const target = confined.value;
      if (target.isRoot) return toolFailure('invalid_arguments', 'is_directory', 'The workspace root is a directory');
      const bytes = Buffer.from(text, 'utf8');
      const digest = sha256(bytes);
      const done = (created: boolean, unchanged: boolean): ToolResultInput =>
        toolSuccess(unchanged ? `${target.relative} already holds this text.` : `Wrote ${bytes.length} bytes to ${target.relative}.`, {
          path: target.relative,
          bytes_written: unchanged ? 0 : bytes.length,
          created,
          unchanged,
          sha256: digest,
        });

      // Look before the watermark: what is there decides whether anything will be written.
      const files = ctx.workspace.files;
      const existing = await files.stat(target.segments);
      if (!existing.ok) return workspaceFileFailure(existing.code, target.relative);
      if (existing.value !== null) {
        if (existing.value.type === 'directory')
          return toolFailure('invalid_arguments', 'is_directory', `Is a directory: ${target.relative}`);
        if (existing.value.type !== 'file') return toolFailure('invalid_arguments', 'not_a_file', `Not a regular file: ${target.relative}`);
        // Replaying a create that already happened changes nothing and needs no watermark.
        if (mode === 'create') {
          const same = await files.sameContent(target.segments, bytes);
          if (!same.ok) return workspaceFileFailure(same.code, target.relative);
          if (same.value) return done(false, true);
          return toolFailure('invalid_arguments', 'already_exists', `Already exists with different content: ${target.relative}`);
        }
      }
      if (ctx.cancellation.aborted) {
        return toolFailure('internal', 'cancelled', 'Cancelled before the write; nothing was written');
      }

      // § The effect watermark: before the first write of any kind, including mkdir.
      await ctx.markEffectSent();
      // The confined helper makes folders, writes a flushed temporary file and renames (or, for
      // create, links) it into place, all by descriptor (docs/adr/0058).
      const written = await files.write(target.segments, bytes, mode);
      if (!written.ok) return workspaceFileFailure(written.code, target.relative);
      return done(written.value.created, written.value.unchanged);
    },
  };
}
