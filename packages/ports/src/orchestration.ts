import type { BridgeCallHandler, BridgeTurn } from './bridge';
import type { ControlExecution } from './control-tools';
import type { LeaseFence } from './fence';
import type { SandboxAvailability, SandboxLimits, SandboxResult } from './sandbox';
import type { ToolExecutionContext, WorkspaceHandle } from './tool';

/**
 * § The programmatic orchestration bridge (docs/adr/0039): one orchestration turn — a bridge
 * turn opened for the run, step and script, the program run in the sandbox with the turn's
 * socket folder and client mounted, and the turn closed whatever happens. The composition
 * implements it over BridgeServer and BubblewrapSandbox (the only place both are built, with
 * the same host user); the runtime drives it and supplies the handler.
 */
export interface OrchestrationTurnRequest {
  readonly turn: BridgeTurn;
  /** The program's source; `javascript` is run by node as an ES module read from stdin. */
  readonly language: 'javascript';
  readonly source: string;
  /** The run's workspace on the host (the program's working folder, /workspace). */
  readonly workspaceHostPath: string;
  readonly limits: SandboxLimits;
  /** Calls the handler answers in this turn; later ones are refused with bridge.calls_exhausted. */
  readonly maximumCalls: number;
}

export interface OrchestrationTurnResult {
  readonly sandbox: SandboxResult;
  /** Calls the bridge counted in this turn (answered or refused). */
  readonly callsCounted: number;
}

export interface OrchestrationSandbox {
  availability(): Promise<SandboxAvailability>;
  /**
   * Run one turn. Never throws for anything the program does; aborting `signal` kills the
   * program and closes the turn (pending handlers are aborted).
   */
  runTurn(request: OrchestrationTurnRequest, handler: BridgeCallHandler, signal: AbortSignal): Promise<OrchestrationTurnResult>;
}

/**
 * The run an orchestration call executes in, as step 10 holds it: the runtime re-enters the
 * pipeline for each bridge call under the same lease fence, deadline, workspace and cancellation.
 */
export interface OrchestrationRunScope {
  readonly fence: LeaseFence;
  readonly deadlineAt: Date;
  readonly callerTimeoutSeconds?: number;
  readonly workspace: WorkspaceHandle | null;
  readonly signal?: AbortSignal;
}

/**
 * The seam step 10 hands an orchestration call to (like ControlToolHost for control tools): the
 * runtime runs the program and answers a result, or suspends the call when a bridge call waited
 * for approval past the hold. The executor never imports the sandbox.
 */
export interface OrchestrationHost {
  execute(args: Record<string, unknown>, context: ToolExecutionContext, scope: OrchestrationRunScope): Promise<ControlExecution>;
}
