/**
 * Every stdio server runs in its own process group, so closing it reaches whatever it started.
 * This registry remembers the live groups; if the worker exits without an orderly shutdown the
 * groups are killed on the way out, so no server outlives its worker.
 */
const liveGroups = new Set<number>();
let exitHookInstalled = false;

export function trackGroup(pgid: number): void {
  liveGroups.add(pgid);
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.once('exit', () => {
      for (const group of liveGroups) killGroup(group, 'SIGKILL');
    });
  }
}

export function untrackGroup(pgid: number): void {
  liveGroups.delete(pgid);
}

/** Signal the whole group; false when nothing in it is left. */
export function killGroup(pgid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false;
  }
}

/** The groups this process still holds (for tests and diagnostics). */
export function liveProcessGroups(): readonly number[] {
  return [...liveGroups];
}
