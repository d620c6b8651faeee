export { BUILTIN_SCOPES, BUILTIN_TOOL_NAMES, createBuiltinTools } from './builtin-tools';
export type { BuiltinToolName, BuiltinToolsOptions } from './builtin-tools';

export { createMathEvaluateTool, mathEvaluateSpec, MATH_EXPRESSION_MAX_LENGTH } from './math/math-evaluate';
export {
  DEFAULT_MAX_DEPTH,
  EXPRESSION_CONSTANTS,
  EXPRESSION_FUNCTIONS,
  ExpressionError,
  evaluateExpression,
  safeEvaluateExpression,
} from './math/expression-parser';
export type { EvaluateOptions, EvaluationResult, ExpressionErrorCode } from './math/expression-parser';

export { createSystemTimeTool, DEFAULT_TIME_ZONE, SYSTEM_CLOCK, systemTimeSpec } from './system/system-time';
export type { SystemTimeOptions } from './system/system-time';

export { createWorkspaceReadTextTool, READ_TEXT_MAX_BYTES, workspaceReadTextSpec } from './workspace/workspace-read-text';
export { createWorkspaceWriteTextTool, WRITE_TEXT_MAX_LENGTH, workspaceWriteTextSpec } from './workspace/workspace-write-text';
export type { WriteMode } from './workspace/workspace-write-text';
export { createWorkspaceListTool, LIST_MAX_ENTRIES, workspaceListSpec } from './workspace/workspace-list';
export type { EntryType, ListEntry } from './workspace/workspace-list';
export { parseWorkspacePath, resolveWorkspacePath, WORKSPACE_PATH_MAX_LENGTH } from './workspace/workspace-path';
export type { PathResult, ResolvedWorkspacePath } from './workspace/workspace-path';

export { createDemoExternalWriteTool, demoExternalWriteSpec, OUTBOX_LINE_MAX_LENGTH } from './demo/demo-external-write';
export type { DemoExternalWriteOptions } from './demo/demo-external-write';
export { DEFAULT_OUTBOX_RELATIVE_PATH, OUTBOX_PATH_ENV, resolveOutboxPath } from './demo/outbox-path';
export type { OutboxPathSources } from './demo/outbox-path';
