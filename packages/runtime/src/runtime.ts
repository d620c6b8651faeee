import type { Principal } from '@veetbot/domain';
import type { AgentSpec, PendingStep, RunRow, RuntimeEnvironment, SessionRow, StepContext } from '@veetbot/ports';
import { ActiveRuns } from './run-lease';
import type { RunBudgets } from './run-budgets';
import { resolveRuntimeSettings, type RuntimeDeps } from './runtime-deps';
import type { RuntimeCore } from './runtime-core';
import { SessionViews } from './session-view';
import { cancelRun, createRun, openSession, type OpenedSession, type OpenSessionOptions } from './sessions-and-runs';
import type { StepOutcome, StepSubmission } from './step-submission';
import { HeldTallies } from './held-tallies';
import { type QueuedStepResult, type SubmitOptions, submitQueuedStep, submitStep } from './submit-step';
import { sweep, type SweepReport } from './sweep';
import { RuntimeControlHost } from './control/control-host';
import { RuntimeOrchestrationHost } from './orchestration/orchestration-host';
import { answerQuestion, completeRun, type AnsweredQuestion } from './control/resume';

/**
 * Sessions, runs and steps around the one pipeline (ARCHITECTURE.md "A call's path"): the
 * API opens sessions and runs and submits steps; the worker runs batches and the recovery
 * sweep. One instance per process: it holds the process's in-flight keys and the runs it is
 * working on.
 */
export class Runtime {
  readonly #core: RuntimeCore;

  constructor(deps: RuntimeDeps) {
    const settings = resolveRuntimeSettings(deps.settings);
    const { stores } = deps;
    const base = { registry: deps.registry, validator: deps.validator, policy: deps.policy, clock: deps.clock };
    const active = new ActiveRuns();
    // § Control tools: the runtime executes them; the host reads the core at call time.
    const control = new RuntimeControlHost(() => this.#core);
    // § The programmatic orchestration bridge: the runtime runs sandbox.run_orchestration's step 10.
    const orchestration = new RuntimeOrchestrationHost(() => this.#core);
    this.#core = {
      deps,
      settings,
      pipeline: {
        ...base,
        ...(deps.hooks === undefined ? {} : { hooks: deps.hooks }),
        ...(deps.metrics === undefined ? {} : { metrics: deps.metrics }),
        durable: {
          invocations: stores.invocations,
          runs: stores.runs,
          approvals: stores.approvals,
          artifacts: deps.artifacts,
          credentials: deps.credentials,
          owner: deps.owner,
          inFlight: new Set<string>(),
          outputs: { inlineMaximumBytes: settings.inlineMaximumBytes },
          maximumAttempts: settings.maximumAttempts,
          control,
          orchestration,
          ...(deps.consents === undefined ? {} : { consents: deps.consents }),
        },
      },
      preview: base,
      lease: { runs: stores.runs, clock: deps.clock, owner: deps.owner, ttlMs: settings.leaseTtlMs, active },
      active,
      views: new SessionViews(),
      preparedSessions: new Set<string>(),
      sessionsAtWork: new Map<string, number>(),
      tallies: new HeldTallies(),
    };
  }

  /** specsForSession + sessions.create: the pin (tool names, specs, tool_schema_sha256). */
  async openSession(
    tenantId: string,
    principal: Principal,
    agent: AgentSpec,
    environment: RuntimeEnvironment,
    options?: OpenSessionOptions,
  ): Promise<SessionRow> {
    return (await openSession(this.#core, tenantId, principal, agent, environment, options)).session;
  }

  /** openSession, also answering what MCP preparation found (per-server status); `mcp` null without MCP. */
  openSessionWithReport(
    tenantId: string,
    principal: Principal,
    agent: AgentSpec,
    environment: RuntimeEnvironment,
    options?: OpenSessionOptions,
  ): Promise<OpenedSession> {
    return openSession(this.#core, tenantId, principal, agent, environment, options);
  }

  createRun(tenantId: string, sessionId: string, options: { deadlineAt: Date; budgets?: RunBudgets }): Promise<RunRow> {
    return createRun(this.#core, tenantId, sessionId, options);
  }

  /**
   * One model step's batch, under the run's lease; resubmitting returns the recorded outcomes.
   * `stored`: the step as it was read from the store (StepStore.getWithContext): it is opened as
   * stored, not stored again (a worker's own loop uses submitQueuedStep).
   */
  submitStep(submission: StepSubmission, stored?: StepContext, options?: SubmitOptions): Promise<StepOutcome> {
    return submitStep(this.#core, submission, stored, options);
  }

  /**
   * A step the api stored and this worker claimed, opened by its identity alone (the opening
   * reads the stored batch, docs/adr/0049): run, or passed over when it completed since the claim
   * or its stored batch is unreadable.
   */
  submitQueuedStep(step: PendingStep, options?: SubmitOptions): Promise<QueuedStepResult> {
    return submitQueuedStep(this.#core, step, options);
  }

  /** The recovery sweep over RUNNING rows whose lease expired. */
  sweep(): Promise<SweepReport> {
    return sweep(this.#core);
  }

  cancelRun(tenantId: string, runId: string): Promise<RunRow> {
    return cancelRun(this.#core, tenantId, runId);
  }

  /** conversation.ask_user's resumption: the answer completes the question's row (USER trust). */
  answerQuestion(tenantId: string, questionId: string, answer: string): Promise<AnsweredQuestion> {
    return answerQuestion(this.#core, tenantId, questionId, answer);
  }

  /** The run's agent completes it with its final answer; a child run joins its parent. */
  completeRun(tenantId: string, runId: string, result: string): Promise<RunRow> {
    return completeRun(this.#core, tenantId, runId, result);
  }
}
