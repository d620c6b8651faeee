import type { ReconcileQuery, Reconciler, Reconcilers, SkillStore } from '@veetbot/ports';
import { resolveOutboxPath } from '../demo/outbox-path';
import { createDemoOutboxReconciler, type OutboxReader } from './demo-outbox-reconciler';
import { createSkillReconciler } from './skill-reconciler';
import { createWorkspaceWriteReconciler } from './workspace-write-reconciler';

/** Sandbox tools act inside a throwaway sandbox: nothing outside it records what they did. */
const sandboxReconciler = (name: string): Reconciler => ({
  name,
  async reconcile(_query: ReconcileQuery) {
    return { outcome: 'unknown', evidence: 'A sandbox leaves no record to look up; a person decides.' };
  },
});

export const SANDBOX_RECONCILED_TOOL_NAMES = ['sandbox.run_command', 'sandbox.run_orchestration'] as const;

export interface BuiltinReconcilersOptions {
  /** The same outbox demo.external_write appends to (createBuiltinTools' outboxPath). */
  readonly outboxPath?: string;
  /** FOR TESTS ONLY: read the outbox through this instead of the file. */
  readonly outboxReader?: OutboxReader;
  /** The skills store skill.manage writes; without it skill.manage has no reconciler. */
  readonly skills?: SkillStore;
}

/**
 * The builtin tools' reconcilers (docs/adr/0063). A tool not here has none and its UNCERTAIN
 * rows wait for a person: every MCP tool today (a server's lookup tool is the later seam:
 * compose another Reconcilers in front of this one), and the tools that write nothing.
 */
export function createBuiltinReconcilers(options: BuiltinReconcilersOptions = {}): Reconcilers {
  const byName = new Map<string, Reconciler>();
  const add = (r: Reconciler) => byName.set(r.name, r);
  add(
    createDemoOutboxReconciler({
      outboxPath: resolveOutboxPath({ outboxPath: options.outboxPath }),
      ...(options.outboxReader === undefined ? {} : { reader: options.outboxReader }),
    }),
  );
  add(createWorkspaceWriteReconciler());
  if (options.skills !== undefined) add(createSkillReconciler({ skills: options.skills }));
  for (const name of SANDBOX_RECONCILED_TOOL_NAMES) add(sandboxReconciler(name));
  return {
    forTool: (toolName) => byName.get(toolName) ?? null,
    toolNames: () => [...byName.keys()],
  };
}
