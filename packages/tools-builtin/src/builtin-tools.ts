import type { BrowserProvider, Clock, Sandbox, SkillStore, Tool, WebSearchProvider } from '@veetbot/ports';
import { BROWSER_SCOPES, BROWSER_TOOL_NAMES } from './browser/browser-specs';
import { createBrowserTools } from './browser/browser-tools';
import { createDemoExternalWriteTool } from './demo/demo-external-write';
import { resolveOutboxPath } from './demo/outbox-path';
import { createMathEvaluateTool } from './math/math-evaluate';
import { createSandboxRunCommandTool } from './sandbox/sandbox-run-command';
import { createSkillManageTool } from './skill/skill-manage';
import { createSystemTimeTool } from './system/system-time';
import { createWorkspaceListTool } from './workspace/workspace-list';
import { createWorkspaceReadTextTool } from './workspace/workspace-read-text';
import { createWorkspaceWriteTextTool } from './workspace/workspace-write-text';
import { createWebFetchTool, type WebFetchOptions } from './web/web-fetch';
import { createWebSearchTool } from './web/web-search';

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

/** The builtins that exist only when the composition gives them a working sandbox, appended last. */
export const SANDBOX_TOOL_NAMES = ['sandbox.run_command'] as const;

/**
 * The web domain (docs/adr/0078), appended after the sandbox's: web.fetch when the composition
 * gives it the operator's egress policy, web.search when the operator configured a provider.
 */
export const WEB_TOOL_NAMES = ['web.fetch', 'web.search'] as const;

/** The scopes the builtins require, for composition roots that grant them to principals. */
export const BUILTIN_SCOPES = ['workspace.read', 'workspace.write', 'demo.write', 'skill.write', 'sandbox.run', ...BROWSER_SCOPES] as const;

/** The browser tools (docs/adr/0079): only when the operator enables a browser provider, appended last. */
export { BROWSER_TOOL_NAMES };

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
  /** See DemoExternalWriteOptions.afterEffect (a test's hook, or the demo's answer delay). */
  readonly afterEffect?: () => Promise<void>;
  /**
   * The tenant skill store: with it, skill.manage is built (§ Skills); without it there is no
   * skill store to manage and the tool is left out. `clock` stamps what it writes.
   */
  readonly skills?: SkillStore;
  /**
   * A sandbox that can run (the composition root asked `availability()` first): with it,
   * sandbox.run_command is built (docs/adr/0037); without it the tool does not exist, so no
   * session can pin a tool that cannot run.
   */
  readonly sandbox?: Sandbox;
  /**
   * web.fetch's egress policy and limits, from the operator's configuration: with it, web.fetch
   * is built; without it the tool does not exist.
   */
  readonly webFetch?: WebFetchOptions;
  /** The operator's search provider: with it, web.search is built; without one it is not registered. */
  readonly webSearch?: WebSearchProvider;
  /**
   * The browser provider the operator enabled (docs/adr/0079): with it, the browser.* tools are
   * built; without it (the default) they do not exist, so no session can pin them.
   */
  readonly browser?: BrowserProvider;
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
    ...(options.sandbox === undefined ? [] : [createSandboxRunCommandTool({ sandbox: options.sandbox })]),
    ...(options.webFetch === undefined ? [] : [createWebFetchTool(options.webFetch)]),
    ...(options.webSearch === undefined ? [] : [createWebSearchTool(options.webSearch)]),
    ...(options.browser === undefined ? [] : createBrowserTools(options.browser)),
  ];
}
