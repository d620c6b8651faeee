import type { SandboxEnding } from '@veetbot/domain';

/**
 * ADR-0008 (sandbox isolation), RULINGS.md "Sandbox isolation" and docs/adr/0037: a program
 * run in an isolated sandbox. The port says what a run may ask for and what it learns; the
 * adapter (packages/sandbox-adapter, bubblewrap) says how. Only the composition roots build
 * one; a tool receives it through its options.
 */

/** Every limit is enforced by the adapter; none is advisory. */
export interface SandboxLimits {
  /** Wall-clock seconds from start; past it the whole sandbox is killed. */
  readonly wallSeconds: number;
  /** CPU seconds of the program (RLIMIT_CPU). */
  readonly cpuSeconds: number;
  /** Address space of each process, in bytes (RLIMIT_AS). */
  readonly memoryBytes: number;
  /** Processes of the sandbox user (RLIMIT_NPROC). */
  readonly processes: number;
  /** stdout plus stderr, in bytes; past it reading stops and the sandbox is killed. */
  readonly outputBytes: number;
}

/** A host folder mounted read-only inside (the bridge's client library, its socket folder). */
export interface SandboxReadOnlyBind {
  readonly hostPath: string;
  readonly sandboxPath: string;
}

export interface SandboxRequest {
  /** The program and its arguments, executed directly: no shell unless argv asks for one. */
  readonly argv: readonly string[];
  /** The run's workspace on the host: the only writable bind, the program's working folder. */
  readonly workspaceHostPath: string;
  /** Written to the program's stdin, which is then closed; absent: an empty stdin. */
  readonly stdin?: string;
  readonly limits: SandboxLimits;
  readonly readOnlyBinds?: readonly SandboxReadOnlyBind[];
  /**
   * Platform-set variables for this run only, added to the synthesized environment (the
   * bridge's VEETBOT_BRIDGE_SOCKET and VEETBOT_BRIDGE_TOKEN). Names must start with VEETBOT_:
   * they never override the synthesized tier and never carry the worker's own variables.
   */
  readonly platformEnvironment?: Readonly<Record<string, string>>;
}

/** How a run ended (the domain's SandboxEnding: one list for the adapter and the tools). */
export type { SandboxEnding };

/** One captured stream: at most the output limit, with the count of what was produced. */
export interface SandboxStream {
  /** UTF-8 decoded; broken sequences and NUL bytes are U+FFFD (storable as jsonb). */
  readonly text: string;
  /** Bytes the program wrote to the stream before it ended (or until reading stopped). */
  readonly totalBytes: number;
  /** Whether `text` holds less than totalBytes. */
  readonly truncated: boolean;
}

export interface SandboxResult {
  readonly ending: SandboxEnding;
  /** The program's exit code; null when it ended by a signal or never started. */
  readonly exitCode: number | null;
  /** The signal that ended the program (e.g. `SIGKILL`), or null. */
  readonly signal: string | null;
  readonly stdout: SandboxStream;
  readonly stderr: SandboxStream;
  readonly durationMs: number;
  /** Operator-facing, for failed_to_start: why (never shown to the model as such). */
  readonly detail: string | null;
}

export type SandboxAvailability = { readonly available: true } | { readonly available: false; readonly reason: string };

export interface Sandbox {
  /** Whether this host can run a sandbox at all, and if not, what is missing. */
  availability(): Promise<SandboxAvailability>;
  /** Run one program. Never throws for anything the program does; aborting kills it. */
  run(request: SandboxRequest, signal: AbortSignal): Promise<SandboxResult>;
}
