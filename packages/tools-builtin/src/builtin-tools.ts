import type { Clock, SkillStore, Tool } from '@veetbot/ports';
import { createDemoExternalWriteTool } from './demo/demo-external-write';
import { resolveOutboxPath } from './demo/outbox-path';
import { createMathEvaluateTool } from './math/math-evaluate';
import { createSkillManageTool } from './skill/skill-manage';
import { createSystemTimeTool } from './system/system-time';
import { createWorkspaceListTool } from './workspace/workspace-list';
import { createWorkspaceReadTextTool } from './workspace/workspace-read-text';
import { createWorkspaceWriteTextTool } from './workspace/workspace-write-text';

/** Every builtin this package provides, in the order createBuiltinTools returns them. */
export const BUILTIN_TOOL_NAMES = [
  'math.evaluate',
  'system.time',
  'workspace.read_text',
  'workspace.write_text',
  'workspace.list',
  'demo.external_write',
] as const;
export type BuiltinToolName = (typeof BUILTIN_TOOL_NAMES)[number];

/** The builtins that exist only when the composition gives them their store, appended in this order. */
export const STORE_BACKED_TOOL_NAMES = ['skill.manage'] as const;

/** The scopes the builtins require, for composition roots that grant them to principals. */
export const BUILTIN_SCOPES = ['workspace.read', 'workspace.write', 'demo.write', 'skill.write'] as const;

const WALL_CLOCK: Clock = { now: () => new Date() };

export interface BuiltinToolsOptions {
  /** system.time's clock; the wall clock by default. */
  readonly clock?: Clock;
  /**
   * demo.external_write's outbox. Without it: $VEETBOT_OUTBOX_PATH, else ./.veetbot/outbox.log
   * relative to process.cwd(). Never derived from a workspace.
   */
  readonly outboxPath?: string;
  /** FOR TESTS ONLY: see DemoExternalWriteOptions.beforeEffect (crash tests kill here). */
  readonly beforeEffect?: () => Promise<void>;
  /** FOR TESTS ONLY: see DemoExternalWriteOptions.afterEffect. */
  readonly afterEffect?: () => Promise<void>;
  /**
   * The tenant skill store: with it, skill.manage is built (§ Skills); without it there is no
   * skill store to manage and the tool is left out. `clock` stamps what it writes.
   */
  readonly skills?: SkillStore;
}

/** The builtin capability tools, ready for the registry. A new builtin is added here. */
export function createBuiltinTools(options: BuiltinToolsOptions = {}): Tool[] {
  const storeBacked =
    options.skills === undefined ? [] : [createSkillManageTool({ skills: options.skills, clock: options.clock ?? WALL_CLOCK })];
  return [
    createMathEvaluateTool(),
    createSystemTimeTool(options.clock === undefined ? {} : { clock: options.clock }),
    createWorkspaceReadTextTool(),
    createWorkspaceWriteTextTool(),
    createWorkspaceListTool(),
    createDemoExternalWriteTool({
      outboxPath: resolveOutboxPath({ outboxPath: options.outboxPath }),
      beforeEffect: options.beforeEffect,
      afterEffect: options.afterEffect,
    }),
    ...storeBacked,
  ];
}
