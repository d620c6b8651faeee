import type { Tool } from '@veetbot/ports';
import { defineBuiltinSpec, JSON_SCHEMA_DIALECT } from '../builtin-spec';
import { NO_WORKSPACE, toolSuccess } from '../tool-result-helpers';
import { confineWorkspacePath, WORKSPACE_PATH_MAX_LENGTH, workspaceFileFailure } from './workspace-path';

export const LIST_MAX_ENTRIES = 1_000;
/** Room kept for the structured envelope when fitting entries into the output limit. */
const ENVELOPE_BYTES = 256;

export type EntryType = 'file' | 'directory' | 'symlink' | 'other';

export interface ListEntry {
  readonly name: string;
  readonly type: EntryType;
  /** Bytes, for regular files only. */
  readonly size?: number;
}

export const workspaceListSpec = defineBuiltinSpec({
  name: 'workspace.list',
  version: '1.0.0',
  description:
    "List one directory of the run's workspace (not recursive), sorted by name. Symbolic links are listed as such and not followed.",
  input_schema: {
    $schema: JSON_SCHEMA_DIALECT,
    type: 'object',
    properties: {
      path: {
        type: 'string',
        maxLength: WORKSPACE_PATH_MAX_LENGTH,
        default: '.',
        description: 'A directory relative to the workspace root; "." is the root.',
      },
    },
    additionalProperties: false,
  },
  output_schema: {
    $schema: JSON_SCHEMA_DIALECT,
    type: 'object',
    properties: {
      path: { type: 'string' },
      entries: {
        type: 'array',
        items: {
          type: 'object',
          properties: {
            name: { type: 'string' },
            type: { type: 'string', enum: ['file', 'directory', 'symlink', 'other'] },
            size: { type: 'integer', minimum: 0 },
          },
          required: ['name', 'type'],
          additionalProperties: false,
        },
      },
      truncated: { type: 'boolean' },
    },
    required: ['path', 'entries', 'truncated'],
    additionalProperties: false,
  },
  side_effect: 'workspace_read',
  risk: 'low',
  idempotency: 'read_only',
  required_scopes: ['workspace.read'],
  timeout_seconds: 30,
  maximum_output_bytes: 262_144,
  allow_parallel: true,
  // See workspace.read_text: names in a workspace can come from fetched content too.
  output_trust: 'internal_tool',
});

const line = (entry: ListEntry): string =>
  entry.type === 'directory'
    ? `${entry.name}/`
    : entry.type === 'symlink'
      ? `${entry.name}@`
      : entry.size === undefined
        ? entry.name
        : `${entry.name} (${entry.size} bytes)`;

export function createWorkspaceListTool(): Tool {
  return {
    spec: workspaceListSpec,
    async execute(args, ctx) {
      if (ctx.workspace === null) return NO_WORKSPACE();
      const confined = confineWorkspacePath(typeof args.path === 'string' ? args.path : '.');
      if (!confined.ok) return confined.failure;
      const target = confined.value;
      // One more than the listing shows, so a longer directory is known truncated; the helper
      // keeps only that many names in memory however large the directory (docs/adr/0025).
      const listed = await ctx.workspace.files.list(target.segments, LIST_MAX_ENTRIES + 1);
      if (!listed.ok) return workspaceFileFailure(listed.code, target.relative);

      // Text and structured both carry each entry; stop before their sum passes the limit.
      const budget = ctx.maximumOutputBytes - ENVELOPE_BYTES;
      let used = 0;
      const entries: ListEntry[] = [];
      let truncated = false;
      for (const listedEntry of listed.value.entries) {
        if (entries.length >= LIST_MAX_ENTRIES) {
          truncated = true;
          break;
        }
        const entry: ListEntry =
          listedEntry.type === 'file'
            ? { name: listedEntry.name, type: 'file', size: listedEntry.size ?? 0 }
            : { name: listedEntry.name, type: listedEntry.type };
        const cost = Buffer.byteLength(JSON.stringify(entry)) + Buffer.byteLength(line(entry)) + 2;
        if (used + cost > budget) {
          truncated = true;
          break;
        }
        used += cost;
        entries.push(entry);
      }

      const header = `${target.relative}: ${entries.length} entr${entries.length === 1 ? 'y' : 'ies'}${truncated ? ' (truncated)' : ''}`;
      return toolSuccess([header, ...entries.map(line)].join('\n'), { path: target.relative, entries, truncated });
    },
  };
}
