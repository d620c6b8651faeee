import { z } from 'zod';

/** What a run may spend. Stored in runs.budgets (wire spelling); every field optional = unbounded. */
export interface RunBudgets {
  /** Tool calls the whole run may make (§ The admission check: "the remaining tool ... budget"). */
  readonly maximumToolCalls?: number;
}

const StoredRunBudgets = z.looseObject({
  maximum_tool_calls: z.number().int().nonnegative().optional(),
});

export function storedBudgets(budgets: RunBudgets | undefined): Record<string, unknown> {
  return budgets?.maximumToolCalls === undefined ? {} : { maximum_tool_calls: budgets.maximumToolCalls };
}

/** Unreadable budgets are unbounded: the run row is written only by createRun, which validates. */
export function readBudgets(stored: Record<string, unknown>): RunBudgets {
  const parsed = StoredRunBudgets.safeParse(stored);
  if (!parsed.success || parsed.data.maximum_tool_calls === undefined) return {};
  return { maximumToolCalls: parsed.data.maximum_tool_calls };
}
