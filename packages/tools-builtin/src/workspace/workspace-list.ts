import { lstat, opendir } from 'node:fs/promises';
import path from 'node:path';
import type { Tool } from '@veetbot/ports';
import { defineBuiltinSpec, JSON_SCHEMA_DIALECT } from '../builtin-spec';
import { NO_WORKSPACE, toolFailure, toolSuccess } from '../tool-result-helpers';
import { confineWorkspacePath, pathNotFound, WORKSPACE_PATH_MAX_LENGTH, workspaceIoFailure } from './workspace-path';

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

/**
 * The `keep` smallest names of a directory in code-unit order (not locale order: the same
 * listing on every machine), read entry by entry: a directory of millions of entries costs
 * `keep` names of memory, not an array of all of them (§ Output: a bounded reader;
 * docs/adr/0025). One more than the listing shows, so a longer directory is known truncated.
 */
async function firstNames(directory: string, keep: number): Promise<string[]> {
  const kept: string[] = [];
  const handle = await opendir(directory, { bufferSize: 256 });
  for await (const entry of handle) {
    const name = entry.name;
    if (kept.length === keep && name >= kept[keep - 1]!) continue;
    let low = 0;
    let high = kept.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (kept[middle]! < name) low = middle + 1;
      else high = middle;
    }
    kept.splice(low, 0, name);
    if (kept.length > keep) kept.pop();
  }
  return kept;
}

export function createWorkspaceListTool(): Tool {
  return {
    spec: workspaceListSpec,
    async execute(args, ctx) {
      if (ctx.workspace === null) return NO_WORKSPACE();
      const confined = await confineWorkspacePath(ctx.workspace.root, typeof args.path === 'string' ? args.path : '.');
      if (!confined.ok) return confined.failure;
      const target = confined.value;
      if (!target.exists) return pathNotFound(target.relative);

      let names: string[];
      try {
        const stats = await lstat(target.absolute);
        if (!stats.isDirectory()) return toolFailure('invalid_arguments', 'not_a_directory', `Not a directory: ${target.relative}`);
        names = await firstNames(target.absolute, LIST_MAX_ENTRIES + 1);
      } catch (error) {
        return workspaceIoFailure(error, target.relative);
      }

      // Text and structured both carry each entry; stop before their sum passes the limit.
      const budget = ctx.maximumOutputBytes - ENVELOPE_BYTES;
      let used = 0;
      const entries: ListEntry[] = [];
      let truncated = false;
      for (const name of names) {
        if (entries.length >= LIST_MAX_ENTRIES) {
          truncated = true;
          break;
        }
        let entry: ListEntry;
        try {
          const stats = await lstat(path.join(target.absolute, name));
          entry = stats.isFile()
            ? { name, type: 'file', size: stats.size }
            : { name, type: stats.isDirectory() ? 'directory' : stats.isSymbolicLink() ? 'symlink' : 'other' };
        } catch {
          continue; // removed between readdir and lstat
        }
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
