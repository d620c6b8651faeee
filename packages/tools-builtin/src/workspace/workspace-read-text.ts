import type { Tool } from '@veetbot/ports';
import { defineBuiltinSpec, JSON_SCHEMA_DIALECT } from '../builtin-spec';
import { NO_WORKSPACE, toolFailure, toolSuccess } from '../tool-result-helpers';
import { decodeUtf8Prefix } from './utf8-prefix';
import { confineWorkspacePath, WORKSPACE_PATH_MAX_LENGTH, workspaceFileFailure } from './workspace-path';

/** Both the largest max_bytes and the declared maximum_output_bytes (256 KiB). */
export const READ_TEXT_MAX_BYTES = 262_144;

export const workspaceReadTextSpec = defineBuiltinSpec({
  name: 'workspace.read_text',
  version: '1.0.0',
  description:
    "Read a UTF-8 text file from the run's workspace. The path is relative to the workspace root. " +
    'Reads at most max_bytes (and never more than the output limit); `truncated` says whether the file was longer.',
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
      max_bytes: { type: 'integer', minimum: 1, maximum: READ_TEXT_MAX_BYTES },
    },
    required: ['path'],
    additionalProperties: false,
  },
  output_schema: {
    $schema: JSON_SCHEMA_DIALECT,
    type: 'object',
    properties: {
      path: { type: 'string' },
      bytes_read: { type: 'integer', minimum: 0 },
      total_bytes: { type: 'integer', minimum: 0 },
      truncated: { type: 'boolean' },
    },
    required: ['path', 'bytes_read', 'total_bytes', 'truncated'],
    additionalProperties: false,
  },
  side_effect: 'workspace_read',
  risk: 'low',
  idempotency: 'read_only',
  required_scopes: ['workspace.read'],
  timeout_seconds: 30,
  maximum_output_bytes: READ_TEXT_MAX_BYTES,
  allow_parallel: true,
  // A workspace can hold fetched content. This tool cannot know where a file came from, so it
  // declares INTERNAL_TOOL; a reader that does know may return a lower ToolResult.output_trust
  // (§ ToolResult: output_trust "may only lower").
  output_trust: 'internal_tool',
});

export function createWorkspaceReadTextTool(): Tool {
  return {
    spec: workspaceReadTextSpec,
    async execute(args, ctx) {
      if (ctx.workspace === null) return NO_WORKSPACE();
      const confined = confineWorkspacePath(String(args.path));
      if (!confined.ok) return confined.failure;
      const target = confined.value;
      if (target.isRoot) return toolFailure('invalid_arguments', 'not_a_file', 'Not a regular file: the workspace root');

      const requested = typeof args.max_bytes === 'number' ? args.max_bytes : ctx.maximumOutputBytes;
      const limit = Math.max(0, Math.min(requested, ctx.maximumOutputBytes));
      // The confined helper walks, opens and reads (docs/adr/0058): never this process.
      const read = await ctx.workspace.files.read(target.segments, limit);
      if (!read.ok) return workspaceFileFailure(read.code, target.relative);
      const { bytes, totalBytes } = read.value;

      const truncated = totalBytes > bytes.length;
      const decoded = decodeUtf8Prefix(bytes, truncated);
      if (!decoded.ok) return toolFailure('invalid_arguments', 'not_utf8', `Not UTF-8 text: ${target.relative}`);
      return toolSuccess(decoded.text, {
        path: target.relative,
        bytes_read: decoded.bytes,
        total_bytes: totalBytes,
        truncated,
      });
    },
  };
}
