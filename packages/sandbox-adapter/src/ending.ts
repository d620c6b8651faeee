import { constants } from 'node:os';
import type { SandboxEnding } from '@veetbot/ports';

const SIGNAL_NAMES = new Map<number, string>(Object.entries(constants.signals).map(([name, number]) => [number, name]));

/**
 * bwrap reports a program killed by signal N as exit status 128 + N (as shells do), so a
 * program that exits 137 by itself reads as SIGKILL: the ambiguity every shell has.
 */
export function splitStatus(code: number | null, signal: string | null): { exitCode: number | null; signal: string | null } {
  if (signal !== null) return { exitCode: null, signal };
  if (code !== null && code > 128 && code < 128 + 65) {
    const name = SIGNAL_NAMES.get(code - 128);
    if (name !== undefined) return { exitCode: null, signal: name };
  }
  return { exitCode: code, signal: null };
}

/** What an allocator, interpreter or runtime prints when RLIMIT_AS refuses it memory. */
const OUT_OF_MEMORY =
  /MemoryError|Cannot allocate memory|out of memory|bad_alloc|memory exhausted|xmalloc|Failed to reserve virtual memory|Allocation failed/i;
/** What a shell or libc prints when RLIMIT_NPROC refuses a fork. */
const NO_FORK = /Cannot fork|can't fork|fork: retry|fork: Resource temporarily unavailable/i;
const CRASH_SIGNALS = new Set(['SIGSEGV', 'SIGABRT', 'SIGBUS', 'SIGTRAP', 'SIGILL']);

export interface EndingFacts {
  /** The limit the adapter itself enforced by killing the sandbox, if any. */
  readonly killedFor: 'timed_out' | 'output_limit' | 'cancelled' | 'disk_limit' | null;
  readonly exitCode: number | null;
  readonly signal: string | null;
  readonly durationMs: number;
  readonly cpuSeconds: number;
  readonly stderrTail: string;
}

/**
 * The typed ending (docs/adr/0037). Wall time, output and cancellation are certain: the
 * adapter ended the run itself. CPU is certain from its signals. Memory and processes have no
 * signal of their own under rlimits (an allocation or a fork just fails), so they are read
 * from how the program died: a failure plus the allocator's or shell's own words.
 */
export function classifyEnding(facts: EndingFacts): SandboxEnding {
  const tail = facts.stderrTail;
  // A fork bomb under RLIMIT_NPROC mostly blocks rather than dies: it ends on the wall clock.
  if (facts.killedFor !== null) return facts.killedFor;
  if (facts.signal === 'SIGXCPU') return 'cpu_limit';
  // RLIMIT_FSIZE: a write past what the workspace had left (docs/adr/0058).
  if (facts.signal === 'SIGXFSZ') return 'disk_limit';
  if (facts.signal === 'SIGKILL' && facts.durationMs >= facts.cpuSeconds * 1000) return 'cpu_limit';
  const failed = (facts.exitCode !== null && facts.exitCode !== 0) || (facts.signal !== null && CRASH_SIGNALS.has(facts.signal));
  if (failed && OUT_OF_MEMORY.test(tail)) return 'memory_limit';
  if (failed && NO_FORK.test(tail)) return 'process_limit';
  return 'exited';
}
