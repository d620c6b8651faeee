import type { PolicyDecision, Principal, ProposedAction, ToolSpec } from '@veetbot/domain';

/** RULINGS.md "Policy": a port; the default engine's profiles are data. */
export interface PolicyEngine {
  /** Step 6. Pure: no I/O, no clock. */
  evaluate(action: ProposedAction): PolicyDecision;
  /**
   * specsForSession's profile filter: false when the profile denies every call of this tool
   * for this principal whatever the arguments or trust (an unconditional deny).
   */
  offers(spec: ToolSpec, principal: Principal): boolean;
}
