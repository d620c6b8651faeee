import type {
  BridgeCallHandler,
  OrchestrationSandbox,
  OrchestrationTurnRequest,
  OrchestrationTurnResult,
  SandboxAvailability,
} from '@veetbot/ports';
import type { BridgeServer } from './bridge/bridge-server';
import type { BubblewrapSandbox } from './bubblewrap-sandbox';

export interface BubblewrapOrchestrationOptions {
  /** The sandbox the program runs in. */
  readonly sandbox: BubblewrapSandbox;
  /** The bridge; built with the same hostUid/hostGid as the sandbox (the socket's owner is the program's user). */
  readonly bridge: BridgeServer;
  /** Where per-turn socket folders are created (the data folder's `bridge/`). */
  readonly bridgeHostDir: string;
  /** node as the sandbox sees it (system folders are mounted read-only): default `/usr/bin/node`. */
  readonly nodePath?: string;
}

/**
 * § The programmatic orchestration bridge (docs/adr/0039): one turn = a bridge turn opened for
 * the run, step and script; node run on the source (an ES module read from stdin, so nothing is
 * written to the workspace) with the turn's socket folder and the client mounted read-only and
 * the token in the platform environment; the turn closed whatever happens — a later connect to
 * its path is ENOENT, and pending handlers are aborted.
 */
export class BubblewrapOrchestration implements OrchestrationSandbox {
  readonly #options: BubblewrapOrchestrationOptions;

  constructor(options: BubblewrapOrchestrationOptions) {
    this.#options = options;
  }

  availability(): Promise<SandboxAvailability> {
    return this.#options.sandbox.availability();
  }

  async runTurn(request: OrchestrationTurnRequest, handler: BridgeCallHandler, signal: AbortSignal): Promise<OrchestrationTurnResult> {
    const { sandbox, bridge, bridgeHostDir } = this.#options;
    const turn = await bridge.openTurn(request.turn, handler, { hostDir: bridgeHostDir, maximumCalls: request.maximumCalls });
    try {
      const result = await sandbox.run(
        {
          // The script hash after `-` is the program's process.argv[2]: an operator's `ps` (and
          // a test's pgrep) tells which script a process runs, without its source.
          argv: [this.#options.nodePath ?? '/usr/bin/node', '--input-type=module', '-', request.turn.scriptHash],
          workspaceHostPath: request.workspaceHostPath,
          stdin: request.source,
          limits: request.limits,
          readOnlyBinds: turn.readOnlyBinds,
          platformEnvironment: turn.platformEnvironment,
        },
        signal,
      );
      return { sandbox: result, callsCounted: turn.callsCounted() };
    } finally {
      await turn.close();
    }
  }
}
