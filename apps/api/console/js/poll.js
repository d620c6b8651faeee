// A view's poll loop, one for every view that redraws from the API on a timer: a 401 signs the
// console out, any other error is shown in the view's status line (never thrown away), and a
// stopped view schedules nothing more.
import { ApiError } from './api.js';
import { errorLine, replace } from './dom.js';

/**
 * @param {number} intervalMs
 * @param {HTMLElement} status where an error is shown
 * @param {{ signedOut(error: unknown): void }} nav
 * @param {(isStopped: () => boolean) => Promise<void>} load redraws; checks isStopped() after each await
 * @returns {{ refresh(): Promise<void>, stop(): void }}
 */
export function pollLoop(intervalMs, status, nav, load) {
  let timer = 0;
  let stopped = false;
  const isStopped = () => stopped;
  async function refresh() {
    window.clearTimeout(timer);
    try {
      await load(isStopped);
    } catch (error) {
      if (error instanceof ApiError && error.status === 401) return nav.signedOut(error);
      replace(status, errorLine(error));
    }
    if (!stopped) timer = window.setTimeout(refresh, intervalMs);
  }
  return {
    refresh,
    stop() {
      stopped = true;
      window.clearTimeout(timer);
    },
  };
}
