import type { BrowserFailure } from '@veetbot/domain';
import type {
  BrowserAction,
  BrowserCallBounds,
  BrowserOperation,
  BrowserPageView,
  BrowserProvider,
  BrowserRunKey,
  BrowserScreenshot,
  EgressPolicy,
} from '@veetbot/ports';
import { type Browser, type BrowserContext, chromium, errors, type Page } from 'playwright-core';
import { DestinationCheck } from './destination';
import { DiagnosticsBuilder, outcomeOf } from './diagnostics-builder';
import { DEFAULT_PROXY_LIMITS, EgressProxy, type EgressProxyLimits } from './egress-proxy';
import { CHROMIUM_FLAGS, type IsolatedLaunch, prepareIsolatedLaunch } from './isolated-launch';
import { flattenAriaTree, pageEvidenceKey } from './page-evidence';
import { isAllowedPageUrl, refuseBeforeNavigation } from './url-rules';

/** docs/adr/0079: the bounds every browser lives within. */
export interface ChromiumBrowserProviderOptions {
  /** The operator's egress policy (the one MCP egress uses). */
  readonly egress: EgressPolicy;
  /** FOR TESTS ONLY: loopback destinations are admitted (see DestinationCheck). */
  readonly allowLoopback?: boolean;
  /** Browsers open at once across runs; past it, open refuses. Default 4. */
  readonly maximumBrowsers?: number;
  /** A browser nobody used for this long is closed (the run has ended or forgot it). Default 300 s. */
  readonly idleSeconds?: number;
  /** The longest a navigation may take, within the call's deadline. Default 30 s. */
  readonly navigationSeconds?: number;
  /** The longest a click, type or select may wait for its element. Default 10 s. */
  readonly actionSeconds?: number;
  /** The snapshot's bound in characters; past it the snapshot is cut and flagged. Default 24 000. */
  readonly snapshotChars?: number;
  readonly proxyLimits?: EgressProxyLimits;
}

const REF = /^[a-z][a-z0-9]{0,15}$/;
const LAUNCH_TIMEOUT_MS = 30_000;
/** Kept back from the call's deadline so the provider answers before the executor gives up. */
const DEADLINE_MARGIN_MS = 1_000;
const TITLE_MAX_CHARS = 512;
const VIEWPORT = { width: 1280, height: 720 };

interface Session {
  readonly launch: IsolatedLaunch;
  readonly proxy: EgressProxy;
  readonly browser: Browser;
  readonly context: BrowserContext;
  page: Page;
  lastUsed: number;
  /** Operations on one run's browser run one at a time. */
  queue: Promise<unknown>;
}

class Failure extends Error {
  constructor(
    readonly failure: Exclude<BrowserFailure, 'none'>,
    readonly detail: string,
  ) {
    super(detail);
  }
}

/**
 * ports.BrowserProvider over Debian's chromium (docs/adr/0079): one browser and one context per
 * run, launched inside bubblewrap with no network of its own; every request leaves through this
 * process's EgressProxy, which applies the egress policy per request and pins DNS. A run's
 * browser is closed by `close`, when it idles past `idleSeconds`, and at `closeAll`.
 */
export class ChromiumBrowserProvider implements BrowserProvider {
  readonly #check: DestinationCheck;
  readonly #sessions = new Map<string, Session>();
  readonly #launching = new Map<string, Promise<Session>>();
  readonly #maximumBrowsers: number;
  readonly #idleMs: number;
  readonly #navigationMs: number;
  readonly #actionMs: number;
  readonly #snapshotChars: number;
  readonly #proxyLimits: EgressProxyLimits;
  readonly #reaper: NodeJS.Timeout;

  constructor(options: ChromiumBrowserProviderOptions) {
    this.#check = new DestinationCheck({ egress: options.egress, allowLoopback: options.allowLoopback ?? false });
    this.#maximumBrowsers = options.maximumBrowsers ?? 4;
    this.#idleMs = (options.idleSeconds ?? 300) * 1000;
    this.#navigationMs = (options.navigationSeconds ?? 30) * 1000;
    this.#actionMs = (options.actionSeconds ?? 10) * 1000;
    this.#snapshotChars = options.snapshotChars ?? 24_000;
    this.#proxyLimits = options.proxyLimits ?? DEFAULT_PROXY_LIMITS;
    this.#reaper = setInterval(() => void this.#reap(), Math.max(1000, Math.min(this.#idleMs, 30_000)));
    this.#reaper.unref();
  }

  /** How many browsers are open (operator view and tests). */
  get openBrowsers(): number {
    return this.#sessions.size;
  }

  open(key: BrowserRunKey, url: string, bounds: BrowserCallBounds): Promise<BrowserOperation<BrowserPageView>> {
    return this.#operate(
      key,
      bounds,
      true,
      async (session, d) => {
        d.phase('navigate');
        const started = performance.now();
        const timeout = this.#budget(bounds, this.#navigationMs);
        let status: number | null = null;
        try {
          const response = await session.page.goto(url, { timeout, waitUntil: 'load' });
          status = response?.status() ?? null;
        } catch (error) {
          d.navigated(performance.now() - started);
          if (error instanceof errors.TimeoutError) {
            // Stop whatever is still loading; the page stays where it got to.
            await session.page.evaluate('window.stop()').catch(() => undefined);
            throw new Failure('navigation_timeout', `The page did not finish loading within ${timeout} ms.`);
          }
          throw new Failure(refusedHere(session, url) ? 'destination_refused' : 'navigation_failed', 'The navigation failed.');
        }
        d.navigated(performance.now() - started);
        if (status === 403 && refusedHere(session, session.page.url())) {
          throw new Failure('destination_refused', 'The egress policy refused where the navigation led.');
        }
        return this.#view(session, bounds, d);
      },
      url,
    );
  }

  snapshot(key: BrowserRunKey, bounds: BrowserCallBounds): Promise<BrowserOperation<BrowserPageView>> {
    return this.#operate(key, bounds, false, (session, d) => this.#view(session, bounds, d));
  }

  act(key: BrowserRunKey, action: BrowserAction, bounds: BrowserCallBounds): Promise<BrowserOperation<BrowserPageView>> {
    return this.#operate(key, bounds, false, async (session, d) => {
      d.phase('act');
      if (!REF.test(action.ref)) throw new Failure('element_not_found', 'The element reference is not one a snapshot gives.');
      const locator = session.page.getByRef(action.ref);
      const timeout = this.#budget(bounds, this.#actionMs);
      if ((await locator.count()) === 0) throw new Failure('element_not_found', 'No element has that reference; take a new snapshot.');
      try {
        switch (action.kind) {
          case 'click':
            await locator.click({ timeout });
            break;
          case 'type':
            await locator.fill(action.text, { timeout });
            if (action.submit) await locator.press('Enter', { timeout });
            break;
          case 'select':
            await locator.selectOption([...action.values], { timeout });
            break;
        }
      } catch (error) {
        if (error instanceof errors.TimeoutError)
          throw new Failure('action_timeout', `The element did not accept the action within ${timeout} ms.`);
        throw new Failure('element_not_actionable', 'The element did not accept the action.');
      }
      // What the action started may be loading; it gets what is left of the navigation bound.
      const started = performance.now();
      await session.page.waitForLoadState('load', { timeout: this.#budget(bounds, this.#navigationMs) }).catch(() => undefined);
      d.navigated(performance.now() - started);
      return this.#view(session, bounds, d);
    });
  }

  screenshot(key: BrowserRunKey, bounds: BrowserCallBounds): Promise<BrowserOperation<BrowserScreenshot>> {
    return this.#operate(key, bounds, false, async (session, d) => {
      d.phase('screenshot');
      const png = await session.page.screenshot({ type: 'png', timeout: this.#budget(bounds, this.#actionMs) });
      return { png: new Uint8Array(png), url: session.page.url() };
    });
  }

  async close(key: BrowserRunKey): Promise<BrowserOperation<{ readonly closed: boolean }>> {
    const d = new DiagnosticsBuilder();
    d.phase('close');
    const id = sessionId(key);
    const pending = this.#launching.get(id);
    if (pending !== undefined) await pending.catch(() => undefined);
    const session = this.#sessions.get(id);
    if (session === undefined) return { ok: true, value: { closed: false }, diagnostics: d.finish('succeeded', 'none') };
    d.placed();
    this.#sessions.delete(id);
    await session.queue.catch(() => undefined);
    await this.#dispose(session);
    return { ok: true, value: { closed: true }, diagnostics: d.finish('succeeded', 'none') };
  }

  async closeAll(): Promise<void> {
    clearInterval(this.#reaper);
    await Promise.allSettled([...this.#launching.values()]);
    const sessions = [...this.#sessions.values()];
    this.#sessions.clear();
    await Promise.allSettled(sessions.map((s) => this.#dispose(s)));
  }

  /** Milliseconds an operation may use: its own bound, within the call's deadline. */
  #budget(bounds: BrowserCallBounds, own: number): number {
    return Math.max(1, Math.min(own, bounds.deadlineAt.getTime() - Date.now() - DEADLINE_MARGIN_MS));
  }

  async #operate<T>(
    key: BrowserRunKey,
    bounds: BrowserCallBounds,
    launch: boolean,
    body: (session: Session, d: DiagnosticsBuilder) => Promise<T>,
    url?: string,
  ): Promise<BrowserOperation<T>> {
    const d = new DiagnosticsBuilder();
    let session: Session | undefined;
    try {
      if (url !== undefined) {
        const refusal = refuseBeforeNavigation(url);
        if (refusal !== null) throw new Failure('url_refused', refusal);
        // The first URL is judged before a browser exists for it: a refused one launches nothing.
        const decision = await this.#check.checkUrl(url);
        if (!decision.allowed) throw new Failure('destination_refused', `The egress policy refused the URL (${decision.code}).`);
      }
      if (bounds.signal.aborted) throw new Failure('cancelled', 'The call was cancelled.');
      session = this.#sessions.get(sessionId(key));
      if (session === undefined) {
        if (!launch) throw new Failure('no_session', 'This run has no open browser; call browser.open first.');
        d.phase('launch');
        const started = performance.now();
        session = await this.#session(key);
        d.launched(performance.now() - started);
      }
      d.placed();
      const current = session;
      const run = current.queue.then(async () => {
        current.proxy.drainBlocked();
        current.lastUsed = Date.now();
        const value = await body(current, d);
        if (!isAllowedPageUrl(current.page.url())) {
          await current.page.goto('about:blank').catch(() => undefined);
          throw new Failure('left_allowed_schemes', 'The page went somewhere other than http or https and was closed.');
        }
        current.lastUsed = Date.now();
        return value;
      });
      current.queue = run.catch(() => undefined);
      const value = await run;
      return { ok: true, value, diagnostics: d.finish('succeeded', 'none') };
    } catch (error) {
      const failed = error instanceof Failure ? error : classify(error, session);
      const drained = session?.proxy.drainBlocked() ?? { blocked: [], truncated: false };
      if (drained.truncated) d.truncated();
      return {
        ok: false,
        failure: failed.failure,
        detail: failed.detail,
        blocked: drained.blocked,
        diagnostics: d.finish(outcomeOf(failed.failure), failed.failure),
      };
    }
  }

  async #session(key: BrowserRunKey): Promise<Session> {
    const id = sessionId(key);
    const pending = this.#launching.get(id);
    if (pending !== undefined) return pending;
    if (this.#sessions.size + this.#launching.size >= this.#maximumBrowsers) {
      throw new Failure('capacity_exhausted', `${this.#maximumBrowsers} browsers are open; close one first.`);
    }
    const launching = this.#launch().finally(() => this.#launching.delete(id));
    this.#launching.set(id, launching);
    const session = await launching;
    this.#sessions.set(id, session);
    return session;
  }

  async #launch(): Promise<Session> {
    const launch = await prepareIsolatedLaunch();
    const proxy = new EgressProxy(this.#check, this.#proxyLimits);
    try {
      await proxy.listen(launch.proxySocketPath);
      const browser = await chromium.launch({
        executablePath: launch.executablePath,
        args: [...CHROMIUM_FLAGS, '--disable-component-update', '--disable-sync', '--no-first-run'],
        chromiumSandbox: false,
        handleSIGINT: false,
        handleSIGTERM: false,
        handleSIGHUP: false,
        timeout: LAUNCH_TIMEOUT_MS,
        env: {},
      });
      // Downloads are refused (a download bomb never lands); service workers would outlive a
      // navigation; popups are closed as they open: one page per run.
      const context = await browser.newContext({
        acceptDownloads: false,
        serviceWorkers: 'block',
        viewport: VIEWPORT,
        javaScriptEnabled: true,
      });
      let first: Page | undefined;
      context.on('page', (popup) => {
        if (first !== undefined && popup !== first) void popup.close().catch(() => undefined);
      });
      const page = await context.newPage();
      first = page;
      page.on('dialog', (dialog) => void dialog.dismiss().catch(() => undefined));
      const session: Session = { launch, proxy, browser, context, page, lastUsed: Date.now(), queue: Promise.resolve() };
      return session;
    } catch (error) {
      await proxy.close().catch(() => undefined);
      await launch.dispose().catch(() => undefined);
      throw new Failure(
        'launch_failed',
        `The browser did not start: ${error instanceof Error ? error.message.split('\n')[0]!.slice(0, 200) : 'unknown'}`,
      );
    }
  }

  async #view(session: Session, bounds: BrowserCallBounds, d: DiagnosticsBuilder): Promise<BrowserPageView> {
    d.phase('snapshot');
    const timeout = this.#budget(bounds, this.#actionMs);
    const page = session.page;
    // The evidence first; the snapshot with references last: references resolve against the
    // latest snapshot taken (playwright's getByRef).
    const tree = await page.ariaSnapshotJSON({ timeout });
    const title = await page.title();
    const text = await page.evaluate<string>("document.body === null ? '' : document.body.innerText.slice(0, 200000)");
    const snapshot = await page.ariaSnapshot({ mode: 'ai', timeout });
    const bounded = boundText(snapshot, this.#snapshotChars);
    if (bounded.truncated) d.truncated();
    const url = page.url();
    const drained = session.proxy.drainBlocked();
    if (drained.truncated) d.truncated();
    return {
      url,
      title: title.slice(0, TITLE_MAX_CHARS),
      snapshot: bounded.text,
      snapshotTruncated: bounded.truncated,
      evidenceKey: pageEvidenceKey({ url, title, text: String(text), elements: flattenAriaTree(tree) }),
      blocked: drained.blocked,
      blockedTruncated: drained.truncated,
    };
  }

  async #reap(): Promise<void> {
    const now = Date.now();
    for (const [id, session] of this.#sessions) {
      if (now - session.lastUsed < this.#idleMs) continue;
      this.#sessions.delete(id);
      await session.queue.catch(() => undefined);
      await this.#dispose(session);
    }
  }

  async #dispose(session: Session): Promise<void> {
    await session.context.close().catch(() => undefined);
    await session.browser.close().catch(() => undefined);
    await session.proxy.close().catch(() => undefined);
    await session.launch.dispose().catch(() => undefined);
  }
}

function sessionId(key: BrowserRunKey): string {
  return `${key.tenantId}\u0000${key.runId}`;
}

/** Whether the proxy refused the destination `url` names since the operation began. */
function refusedHere(session: Session, url: string): boolean {
  let destination: string;
  try {
    const parsed = new URL(url);
    destination = parsed.port === '' ? parsed.hostname : `${parsed.hostname}:${parsed.port}`;
  } catch {
    return false;
  }
  return session.proxy
    .peekBlocked()
    .some((b) => b.destination === destination || b.destination === `${destination}:443` || b.destination === `${destination}:80`);
}

function classify(error: unknown, session: Session | undefined): Failure {
  if (session !== undefined && !session.browser.isConnected()) return new Failure('browser_closed', 'The browser ended.');
  if (error instanceof errors.TimeoutError) return new Failure('action_timeout', 'The operation did not finish in time.');
  return new Failure('internal', 'The browser operation failed.');
}

/** Cut at a line boundary within `max` characters. */
function boundText(text: string, max: number): { readonly text: string; readonly truncated: boolean } {
  if (text.length <= max) return { text, truncated: false };
  const cut = text.lastIndexOf('\n', max);
  return { text: text.slice(0, cut > 0 ? cut : max), truncated: true };
}
