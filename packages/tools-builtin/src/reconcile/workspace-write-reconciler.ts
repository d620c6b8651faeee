import { createHash } from 'node:crypto';
import type { ReconcileAnswer, ReconcileQuery, Reconciler } from '@veetbot/ports';
import { confineWorkspacePath } from '../workspace/workspace-path';

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/**
 * workspace.write_text's reconciler (docs/adr/0063), by what it leaves, read only through the
 * run's WorkspaceFiles (docs/adr/0058). The file's sha256 equal to the text's → applied (the
 * write is atomic: a rename, so a partial file never exists). Anything else → unknown: a
 * different file may be a later write over ours, and an absent one a later delete.
 */
export function createWorkspaceWriteReconciler(): Reconciler {
  return {
    name: 'workspace.write_text',
    async reconcile(query: ReconcileQuery): Promise<ReconcileAnswer> {
      const { text } = query.arguments;
      if (typeof text !== 'string') return { outcome: 'unknown', evidence: 'The row carries no text.' };
      const confined = confineWorkspacePath(String(query.arguments.path));
      if (!confined.ok || confined.value.isRoot) return { outcome: 'unknown', evidence: 'The row names no workspace file.' };
      const files = await query.workspace();
      if (files === null) return { outcome: 'unknown', evidence: 'The run has no workspace to look in.' };
      const expected = Buffer.from(text, 'utf8');
      const read = await files.read(confined.value.segments, expected.length + 1);
      if (!read.ok) return { outcome: 'unknown', evidence: `${confined.value.relative}: ${read.code}.` };
      const digest = sha256(read.value.bytes);
      if (read.value.totalBytes === expected.length && digest === sha256(expected)) {
        return { outcome: 'applied', evidence: `${confined.value.relative} holds the call's text (sha256 ${digest.slice(0, 16)}…).` };
      }
      return {
        outcome: 'unknown',
        evidence: `${confined.value.relative} holds ${read.value.totalBytes} bytes that are not the call's text.`,
      };
    },
  };
}
