import type { ControlExecution, ControlToolHost, ToolExecutionContext } from '@veetbot/ports';
import type { RuntimeCore } from '../runtime-core';
import { startChildRun } from './delegate-run';
import { loadSkill } from './skill-load';
import { updateWorkingState } from './working-state';

/**
 * § Control tools: the runtime executes the five control tools (step 10 hands them here). Each
 * acts on the run, not the world; two suspend. tool.call never gets here: the pipeline unwraps
 * it before step 1 into the deferred tool it names.
 */
export class RuntimeControlHost implements ControlToolHost {
  readonly #core: () => RuntimeCore;

  /** `core` is read at call time: the host is built before the core that holds it. */
  constructor(core: () => RuntimeCore) {
    this.#core = core;
  }

  async execute(name: string, args: Record<string, unknown>, context: ToolExecutionContext): Promise<ControlExecution> {
    const core = this.#core();
    switch (name) {
      case 'conversation.ask_user':
        // The question id is the invocation's id: one row per question, found by it (docs/adr/0034).
        return { kind: 'suspended', suspendedKind: 'user_input', suspendedRef: context.invocationId };
      case 'delegate.run':
        return startChildRun(core, args, context);
      case 'context.update_working_state':
        return { kind: 'returned', value: await updateWorkingState(core.deps.stores.workingStates, args, context, core.deps.clock.now()) };
      case 'skill.load':
        return { kind: 'returned', value: await loadSkill(core, args, context) };
      default:
        throw new Error(`${name} is not a control tool this runtime executes.`);
    }
  }
}
