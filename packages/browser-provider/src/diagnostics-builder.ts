import {
  BROWSER_DIAGNOSTICS_VERSION,
  BrowserDiagnostics,
  type BrowserFailure,
  type BrowserOutcome,
  type BrowserPhase,
  type BrowserPlacement,
  boundedTiming,
} from '@veetbot/domain';

/**
 * Collects one operation's diagnostics in the provider's host code (ADR-0158, docs/adr/0079).
 * Its inputs are the provider's own enum literals and performance.now() readings: nothing a
 * page returns is ever passed in, and the result is parsed by the closed schema.
 */
export class DiagnosticsBuilder {
  readonly #started = performance.now();
  #phase: BrowserPhase = 'validate';
  #placement: BrowserPlacement = 'not_started';
  #launchMs = 0;
  #navigationMs = 0;
  #truncated = false;

  phase(phase: BrowserPhase): void {
    this.#phase = phase;
  }

  placed(): void {
    this.#placement = 'isolated_sandbox';
  }

  launched(ms: number): void {
    this.#launchMs = ms;
  }

  navigated(ms: number): void {
    this.#navigationMs = ms;
  }

  truncated(): void {
    this.#truncated = true;
  }

  finish(outcome: BrowserOutcome, failure: BrowserFailure): BrowserDiagnostics {
    return BrowserDiagnostics.parse({
      version: BROWSER_DIAGNOSTICS_VERSION,
      phase: this.#phase,
      outcome,
      failure,
      placement: this.#placement,
      timings: {
        total_ms: boundedTiming(performance.now() - this.#started),
        launch_ms: boundedTiming(this.#launchMs),
        navigation_ms: boundedTiming(this.#navigationMs),
      },
      truncated: this.#truncated,
    });
  }
}

/** The outcome a failure is reported under. */
export function outcomeOf(failure: Exclude<BrowserFailure, 'none'>): BrowserOutcome {
  switch (failure) {
    case 'url_refused':
    case 'destination_refused':
    case 'left_allowed_schemes':
      return 'refused';
    case 'navigation_timeout':
    case 'action_timeout':
      return 'timed_out';
    default:
      return 'failed';
  }
}
