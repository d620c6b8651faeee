import { constants, type FileHandle, open } from 'node:fs/promises';
import type { Tool } from '@veetbot/ports';
import { defineBuiltinSpec, JSON_SCHEMA_DIALECT } from '../builtin-spec';
import { NO_WORKSPACE, toolFailure, toolSuccess } from '../tool-result-helpers';
import { decodeUtf8Prefix } from './utf8-prefix';
import { confineWorkspacePath, pathEscape, pathNotFound, WORKSPACE_PATH_MAX_LENGTH, workspaceIoFailure } from './workspace-path';

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

// O_NOFOLLOW: the last component cannot have been swapped for a link since confinement.
// O_NONBLOCK: a FIFO planted in the workspace must not hang the call before fstat refuses it.
const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

export function createWorkspaceReadTextTool(): Tool {
  return {
    spec: workspaceReadTextSpec,
    async execute(args, ctx) {
      if (ctx.workspace === null) return NO_WORKSPACE();
      const confined = await confineWorkspacePath(ctx.workspace.root, String(args.path));
      if (!confined.ok) return confined.failure;
      const target = confined.value;
      if (!target.exists) return pathNotFound(target.relative);

      const requested = typeof args.max_bytes === 'number' ? args.max_bytes : ctx.maximumOutputBytes;
      const limit = Math.max(0, Math.min(requested, ctx.maximumOutputBytes));

      let handle: FileHandle;
      try {
        handle = await open(target.absolute, READ_FLAGS);
      } catch (error) {
        if ((error as { code?: unknown }).code === 'ELOOP') return pathEscape(`${target.relative} became a symbolic link during the call`);
        return workspaceIoFailure(error, target.relative);
      }
      let buffer: Buffer;
      let total: number;
      try {
        const stats = await handle.stat();
        if (!stats.isFile()) return toolFailure('invalid_arguments', 'not_a_file', `Not a regular file: ${target.relative}`);
        total = stats.size;
        buffer = Buffer.alloc(Math.min(limit, total));
        let filled = 0;
        while (filled < buffer.length) {
          const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, filled);
          if (bytesRead === 0) break;
          filled += bytesRead;
        }
        buffer = buffer.subarray(0, filled);
      } catch (error) {
        return workspaceIoFailure(error, target.relative);
      } finally {
        await handle.close();
      }

      const truncated = total > buffer.length;
      const decoded = decodeUtf8Prefix(buffer, truncated);
      if (!decoded.ok) return toolFailure('invalid_arguments', 'not_utf8', `Not UTF-8 text: ${target.relative}`);
      return toolSuccess(decoded.text, {
        path: target.relative,
        bytes_read: decoded.bytes,
        total_bytes: total,
        truncated,
      });
    },
  };
}
