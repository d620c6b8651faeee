import type { BrowserDiagnostics, BrowserFailure } from '@veetbot/domain';

/**
 * The browser tools' provider (docs/adr/0079): one browser context per run, running inside the
 * sandbox's namespaces, whose only way out is the platform's egress proxy. The builtin tools
 * see this port only; the chromium adapter (@veetbot/browser-provider) implements it.
 */

/** Who owns a browser: a run of a tenant. A run never reaches another run's browser. */
export interface BrowserRunKey {
  readonly tenantId: string;
  readonly runId: string;
}

/** What the call allows the operation (already min'd with the run deadline by the executor). */
export interface BrowserCallBounds {
  readonly deadlineAt: Date;
  readonly signal: AbortSignal;
}

/** A request the egress proxy refused: the destination as the page named it (bounded) and the code. */
export interface BrowserBlockedRequest {
  /** host[:port], at most 255 characters: page-chosen, so untrusted text. */
  readonly destination: string;
  readonly code: string;
}

/** A page as the tools return it. Everything but evidenceKey is page-chosen text (untrusted). */
export interface BrowserPageView {
  readonly url: string;
  readonly title: string;
  /** The accessibility tree with element references ([ref=e2]), bounded. */
  readonly snapshot: string;
  readonly snapshotTruncated: boolean;
  /** § New evidence: the platform's digest of the page; never model-visible (docs/adr/0079). */
  readonly evidenceKey: string;
  /** Requests refused since the previous operation, bounded. */
  readonly blocked: readonly BrowserBlockedRequest[];
  readonly blockedTruncated: boolean;
}

export interface BrowserScreenshot {
  readonly png: Uint8Array;
  readonly url: string;
}

/** Every operation's answer: its value or a closed failure, and the trusted diagnostics. */
export type BrowserOperation<T> =
  | { readonly ok: true; readonly value: T; readonly diagnostics: BrowserDiagnostics }
  | {
      readonly ok: false;
      readonly failure: Exclude<BrowserFailure, 'none'>;
      /** Operator-facing, platform-written; never page text. */
      readonly detail: string;
      readonly blocked: readonly BrowserBlockedRequest[];
      readonly diagnostics: BrowserDiagnostics;
    };

export type BrowserAction =
  | { readonly kind: 'click'; readonly ref: string }
  | { readonly kind: 'type'; readonly ref: string; readonly text: string; readonly submit: boolean }
  | { readonly kind: 'select'; readonly ref: string; readonly values: readonly string[] };

export interface BrowserProvider {
  /** Navigate the run's page (launching its browser first if it has none). */
  open(key: BrowserRunKey, url: string, bounds: BrowserCallBounds): Promise<BrowserOperation<BrowserPageView>>;
  snapshot(key: BrowserRunKey, bounds: BrowserCallBounds): Promise<BrowserOperation<BrowserPageView>>;
  act(key: BrowserRunKey, action: BrowserAction, bounds: BrowserCallBounds): Promise<BrowserOperation<BrowserPageView>>;
  screenshot(key: BrowserRunKey, bounds: BrowserCallBounds): Promise<BrowserOperation<BrowserScreenshot>>;
  /** Close the run's browser; closing one that is not open succeeds. */
  close(key: BrowserRunKey): Promise<BrowserOperation<{ readonly closed: boolean }>>;
  /** Close every browser (process shutdown). */
  closeAll(): Promise<void>;
}
