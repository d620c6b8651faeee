import { createHash, randomBytes } from 'node:crypto';
import { constants, link, mkdir, open, realpath, rename, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import type { ToolResultInput } from '@veetbot/domain';
import type { Tool } from '@veetbot/ports';
import { defineBuiltinSpec, JSON_SCHEMA_DIALECT } from '../builtin-spec';
import { errnoCode, NO_WORKSPACE, toolFailure, toolSuccess } from '../tool-result-helpers';
import { confineWorkspacePath, isInside, pathEscape, WORKSPACE_PATH_MAX_LENGTH, workspaceIoFailure } from './workspace-path';

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

/**
 * Whether `file` holds exactly `bytes`, reading no more than bytes.length + 1 of it (§ Output:
 * a bounded reader; docs/adr/0025): a file planted in the workspace may be any size, and a
 * replayed create must not load gigabytes to learn that it differs.
 */
async function sameContent(file: string, bytes: Uint8Array): Promise<boolean> {
  const handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    const stats = await handle.stat();
    if (!stats.isFile() || stats.size !== bytes.length) return false;
    // One byte more than expected: a file that grew since the stat is not the same either.
    const existing = Buffer.alloc(bytes.length + 1);
    let filled = 0;
    while (filled < existing.length) {
      const { bytesRead } = await handle.read(existing, filled, existing.length - filled, filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    return filled === bytes.length && Buffer.compare(existing.subarray(0, filled), bytes) === 0;
  } finally {
    await handle.close();
  }
}

/** Write bytes to a fresh temporary file beside the target, flushed, with the given mode. */
async function writeTemporary(directory: string, base: string, bytes: Uint8Array, fileMode: number | undefined): Promise<string> {
  const temporary = path.join(directory, `.${base}.${randomBytes(6).toString('hex')}.veetbot-tmp`);
  const handle = await open(temporary, 'wx', 0o666);
  try {
    await handle.writeFile(bytes);
    if (fileMode !== undefined) await handle.chmod(fileMode);
    await handle.sync();
  } catch (error) {
    await handle.close();
    await unlink(temporary).catch(() => undefined);
    throw error;
  }
  await handle.close();
  return temporary;
}

/** Make the rename durable: fsync the directory that holds the new entry (best effort). */
async function syncDirectory(directory: string): Promise<void> {
  try {
    const handle = await open(directory, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // Some file systems refuse fsync on a directory; the data itself is already flushed.
  }
}

export function createWorkspaceWriteTextTool(): Tool {
  return {
    spec: workspaceWriteTextSpec,
    async execute(args, ctx): Promise<ToolResultInput> {
      if (ctx.workspace === null) return NO_WORKSPACE();
      const mode: WriteMode = args.mode === 'create' ? 'create' : 'overwrite';
      const text = args.text;
      if (typeof text !== 'string') return toolFailure('invalid_arguments', 'text', 'text must be a string');

      const confined = await confineWorkspacePath(ctx.workspace.root, String(args.path));
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

      let existingMode: number | undefined;
      if (target.exists) {
        try {
          const stats = await stat(target.absolute);
          if (stats.isDirectory()) return toolFailure('invalid_arguments', 'is_directory', `Is a directory: ${target.relative}`);
          if (!stats.isFile()) return toolFailure('invalid_arguments', 'not_a_file', `Not a regular file: ${target.relative}`);
          existingMode = stats.mode & 0o7777;
          // Replaying a create that already happened changes nothing and needs no watermark.
          if (mode === 'create') {
            if (await sameContent(target.absolute, bytes)) return done(false, true);
            return toolFailure('invalid_arguments', 'already_exists', `Already exists with different content: ${target.relative}`);
          }
        } catch (error) {
          return workspaceIoFailure(error, target.relative);
        }
      }
      if (ctx.cancellation.aborted) {
        return toolFailure('internal', 'cancelled', 'Cancelled before the write; nothing was written');
      }

      // § The effect watermark: before the first write of any kind, including mkdir.
      await ctx.markEffectSent();
      return writeConfined(target, bytes, mode, existingMode, done);
    },
  };
}

async function writeConfined(
  target: { readonly realRoot: string; readonly absolute: string; readonly relative: string; readonly exists: boolean },
  bytes: Uint8Array,
  mode: WriteMode,
  existingMode: number | undefined,
  done: (created: boolean, unchanged: boolean) => ToolResultInput,
): Promise<ToolResultInput> {
  const directory = path.dirname(target.absolute);
  const base = path.basename(target.absolute);
  let temporary: string | undefined;
  try {
    await mkdir(directory, { recursive: true });
    // A directory created above, or an existing one swapped meanwhile, must still be inside.
    if (!isInside(target.realRoot, await realpath(directory))) {
      return pathEscape(`The directory of ${target.relative} resolves outside the workspace`);
    }
    temporary = await writeTemporary(directory, base, bytes, existingMode);
    if (mode === 'create') {
      // link() fails with EEXIST rather than replacing: an atomic "create if absent".
      try {
        await link(temporary, target.absolute);
      } catch (error) {
        if (errnoCode(error) !== 'EEXIST') throw error;
        if (await sameContent(target.absolute, bytes)) return done(false, true);
        return toolFailure('invalid_arguments', 'already_exists', `Already exists with different content: ${target.relative}`);
      }
      await syncDirectory(directory);
      return done(true, false);
    }
    await rename(temporary, target.absolute);
    temporary = undefined;
    await syncDirectory(directory);
    return done(!target.exists, false);
  } catch (error) {
    return workspaceIoFailure(error, target.relative);
  } finally {
    if (temporary !== undefined) await unlink(temporary).catch(() => undefined);
  }
}
