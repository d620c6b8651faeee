import { readdir, readFile } from 'node:fs/promises';
import type { BenchContext } from './bench-context';

/**
 * PostgreSQL's CPU time, read from /proc (utime + stime of each server process). On the bench's
 * own cluster (docs/adr/0072) the processes are exactly the postmaster and its children —
 * backends, WAL writer, checkpointer, background writer — and nothing else on the machine; on an
 * external server every process named `postgres*` counts (another server's too).
 * By pid: backends come and go with pooled connections, so a window sums each pid's growth and a
 * backend that started inside the window counts from zero.
 */
export type PostgresCpuSnapshot = ReadonlyMap<string, number> | null;

/** Clock ticks per second on Linux (USER_HZ). */
const TICKS_PER_SECOND = 100;

interface ProcStat {
  readonly ppid: string;
  /** utime + stime, ms. */
  readonly cpuMs: number;
}

async function procStat(pid: string): Promise<ProcStat | null> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => null);
  if (stat === null) return null;
  // After "(comm) ": state, ppid, …; utime and stime are fields 14 and 15 of the whole line.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { ppid: fields[1] ?? '', cpuMs: ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND };
}

export async function postgresCpuSnapshot(context: BenchContext): Promise<PostgresCpuSnapshot> {
  const postmaster = context.cluster === undefined ? null : String(context.cluster.postmasterPid);
  const found = new Map<string, number>();
  try {
    for (const entry of await readdir('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      if (postmaster === null) {
        const comm = await readFile(`/proc/${entry}/comm`, 'utf8').catch(() => '');
        if (!comm.startsWith('postgres')) continue;
      }
      const stat = await procStat(entry);
      if (stat === null) continue;
      if (postmaster !== null && entry !== postmaster && stat.ppid !== postmaster) continue;
      found.set(entry, stat.cpuMs);
    }
  } catch {
    return null;
  }
  return found;
}

/** CPU ms PostgreSQL spent between two snapshots, or null where /proc was unreadable. */
export function postgresCpuSpent(before: PostgresCpuSnapshot, after: PostgresCpuSnapshot): number | null {
  if (before === null || after === null) return null;
  let spent = 0;
  for (const [pid, ms] of after) spent += ms - (before.get(pid) ?? 0);
  return spent;
}
