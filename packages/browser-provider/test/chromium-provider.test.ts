import { BrowserDiagnostics, BrowserFailure, BrowserOutcome, BrowserPhase, BrowserPlacement } from '@veetbot/domain';
import { DefaultEgressPolicy } from '@veetbot/mcp-adapter/egress';
import type { BrowserCallBounds, BrowserOperation } from '@veetbot/ports';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChromiumBrowserProvider } from '../src/index';
import { type HostileServer, startHostileServer } from './hostile-server';

// Real Debian chromium inside real bubblewrap (docs/adr/0079): scripts/ensure-chromium.sh and
// ensure-bubblewrap.sh install both here and in CI.
const bounds = (seconds = 30): BrowserCallBounds => ({
  deadlineAt: new Date(Date.now() + seconds * 1000),
  signal: new AbortController().signal,
});
const run = (runId: string) => ({ tenantId: 'tenant-a', runId });

function value<T>(operation: BrowserOperation<T>): T {
  if (!operation.ok) throw new Error(`expected success, got ${operation.failure}: ${operation.detail}`);
  return operation.value;
}

let server: HostileServer;
let provider: ChromiumBrowserProvider;

beforeAll(async () => {
  server = await startHostileServer();
  // The strict policy (private, link-local and metadata refused) with plain http allowed, so a
  // refusal below is the address's, not the scheme's; loopback by the test-only switch.
  provider = new ChromiumBrowserProvider({
    egress: new DefaultEgressPolicy({ allowHttp: true }),
    allowLoopback: true,
    navigationSeconds: 4,
    proxyLimits: { transferBytes: 8 * 1024 * 1024, connections: 64, blockedEntries: 16 },
  });
});

afterAll(async () => {
  await provider?.closeAll();
  await server?.close();
});

describe('the browser provider over real chromium, isolated', () => {
  it('opens a page, snapshots it with element references, and acts on them', async () => {
    const opened = await provider.open(run('r-form'), `${server.origin}/form`, bounds());
    const page = value(opened);
    expect(page.title).toBe('Form');
    expect(page.snapshot).toMatch(/heading "Order" \[level=1\] \[ref=e\d+\]/);
    expect(opened.diagnostics).toMatchObject({ phase: 'snapshot', outcome: 'succeeded', failure: 'none', placement: 'isolated_sandbox' });
    expect(page.evidenceKey).toMatch(/^[0-9a-f]{64}$/);

    // The same page observed twice keys the same, whatever the refs; a change keys differently.
    const again = value(await provider.snapshot(run('r-form'), bounds()));
    expect(again.evidenceKey).toBe(page.evidenceKey);

    const ref = (label: RegExp): string => {
      const line = again.snapshot.split('\n').find((l) => label.test(l));
      const match = line === undefined ? null : /\[ref=([a-z0-9]+)\]/.exec(line);
      if (match === null) throw new Error(`no ref for ${String(label)} in\n${again.snapshot}`);
      return match[1]!;
    };
    value(await provider.act(run('r-form'), { kind: 'type', ref: ref(/textbox "Name"/), text: 'Ada', submit: false }, bounds()));
    value(await provider.act(run('r-form'), { kind: 'select', ref: ref(/combobox "Size"/), values: ['large'] }, bounds()));
    const clicked = value(await provider.act(run('r-form'), { kind: 'click', ref: ref(/button "Send"/) }, bounds()));
    expect(clicked.snapshot).toContain('Clicked Ada');
    expect(clicked.evidenceKey).not.toBe(page.evidenceKey);

    const missing = await provider.act(run('r-form'), { kind: 'click', ref: 'e999' }, bounds());
    expect(missing).toMatchObject({ ok: false, failure: 'element_not_found' });
    const forged = await provider.act(run('r-form'), { kind: 'click', ref: 'e1] >> css=body' }, bounds());
    expect(forged).toMatchObject({ ok: false, failure: 'element_not_found' });

    const shot = value(await provider.screenshot(run('r-form'), bounds()));
    expect(Buffer.from(shot.png.subarray(0, 8)).toString('hex')).toBe('89504e470d0a1a0a');
  });

  it('gives each run its own browser and context, and closes it', async () => {
    value(await provider.open(run('r-cookie-a'), `${server.origin}/form`, bounds()));
    const other = value(await provider.open(run('r-cookie-b'), `${server.origin}/`, bounds()));
    // run a's cookie was set by /form; run b's context never saw it.
    expect(other.snapshot).toContain('Cookie: none');
    const before = provider.openBrowsers;
    expect(value(await provider.close(run('r-cookie-a'))).closed).toBe(true);
    expect(provider.openBrowsers).toBe(before - 1);
    expect(value(await provider.close(run('r-cookie-a'))).closed).toBe(false);
    // Another tenant's run of the same id is another browser: it has none.
    expect(await provider.snapshot({ tenantId: 'tenant-b', runId: 'r-cookie-b' }, bounds())).toMatchObject({
      ok: false,
      failure: 'no_session',
    });
    await provider.close(run('r-cookie-b'));
    await provider.close(run('r-form'));
  });

  it('refuses subresources and websockets to metadata and private addresses: the page sees failed loads', async () => {
    const page = value(await provider.open(run('r-sub'), `${server.origin}/subresources`, bounds()));
    // The websocket's error may arrive after load; a snapshot afterwards sees it.
    let text = page.snapshot;
    let blocked = [...page.blocked];
    for (let i = 0; i < 20 && !text.includes('ws-failed'); i++) {
      const next = value(await provider.snapshot(run('r-sub'), bounds()));
      text = next.snapshot;
      blocked = [...blocked, ...next.blocked];
    }
    expect(text).toContain('metadata-failed');
    expect(text).toContain('private-failed');
    expect(text).toContain('ws-failed');
    expect(blocked).toEqual(
      expect.arrayContaining([
        { destination: '169.254.169.254', code: 'egress.address_refused' },
        { destination: '10.20.30.40', code: 'egress.address_refused' },
        { destination: '10.9.8.7:8080', code: 'egress.address_refused' },
      ]),
    );
    await provider.close(run('r-sub'));
  });

  it('refuses a redirect to the metadata service', async () => {
    const redirected = await provider.open(run('r-redirect'), `${server.origin}/redirect-metadata`, bounds());
    expect(redirected).toMatchObject({ ok: false, failure: 'destination_refused' });
    if (redirected.ok) return;
    expect(redirected.blocked).toContainEqual({ destination: '169.254.169.254', code: 'egress.address_refused' });
    expect(redirected.diagnostics).toMatchObject({ outcome: 'refused', failure: 'destination_refused', placement: 'isolated_sandbox' });
    await provider.close(run('r-redirect'));
  });

  it('ends a navigation that never finishes at its deadline with a stable failure', async () => {
    const never = await provider.open(run('r-never'), `${server.origin}/never`, bounds());
    expect(never).toMatchObject({ ok: false, failure: 'navigation_timeout' });
    expect(never.diagnostics).toMatchObject({ phase: 'navigate', outcome: 'timed_out', failure: 'navigation_timeout' });
    expect(never.diagnostics.timings.navigation_ms).toBeGreaterThan(0);
    await provider.close(run('r-never'));
  });

  it('refuses downloads and cuts a response past the transfer bound', async () => {
    const page = value(await provider.open(run('r-bomb'), `${server.origin}/bomb-link`, bounds()));
    const link = /link "Get the file" \[ref=([a-z0-9]+)\]/.exec(page.snapshot)![1]!;
    const after = value(await provider.act(run('r-bomb'), { kind: 'click', ref: link }, bounds()));
    expect(after.url).toBe(`${server.origin}/bomb-link`);
    const inline = /link "Inline" \[ref=([a-z0-9]+)\]/.exec(after.snapshot)![1]!;
    const cut = await provider.act(run('r-bomb'), { kind: 'click', ref: inline }, bounds());
    // Whichever response reached the bound first (the refused download may already have
    // streamed past it before chromium cancelled it), the proxy cut it and said so.
    const blocked = [...after.blocked, ...(cut.ok ? cut.value.blocked : cut.blocked)];
    expect(blocked).toContainEqual({ destination: '*', code: 'browser.transfer_limit' });
    await provider.close(run('r-bomb'));
  });

  it('refuses file: and chrome: URLs before navigation, and file: links from a page', async () => {
    const open = provider.openBrowsers;
    for (const url of [
      'file:///etc/passwd',
      'chrome://settings',
      'javascript:alert(1)',
      'data:text/html,hi',
      'view-source:http://127.0.0.1/',
    ]) {
      const refused = await provider.open(run('r-file'), url, bounds());
      expect(refused).toMatchObject({ ok: false, failure: 'url_refused' });
      expect(refused.diagnostics).toMatchObject({ placement: 'not_started', outcome: 'refused' });
    }
    expect(provider.openBrowsers).toBe(open);
    const page = value(await provider.open(run('r-file'), `${server.origin}/file-link`, bounds()));
    expect(page.snapshot).not.toContain('root:x:0:0');
    const link = /link "Passwords" \[ref=([a-z0-9]+)\]/.exec(page.snapshot)![1]!;
    const clicked = await provider.act(run('r-file'), { kind: 'click', ref: link }, bounds());
    const url = clicked.ok ? clicked.value.url : 'refused';
    expect(url === `${server.origin}/file-link` || (!clicked.ok && clicked.failure === 'left_allowed_schemes')).toBe(true);
    if (clicked.ok) expect(clicked.value.snapshot).not.toContain('root:x:0:0');
    await provider.close(run('r-file'));
  });

  it('keeps diagnostics to the closed enums whatever the page says', async () => {
    const forged = await provider.open(run('r-forged'), `${server.origin}/forged`, bounds());
    const snap = await provider.snapshot(run('r-forged'), bounds());
    for (const operation of [forged, snap]) {
      const d = BrowserDiagnostics.parse(operation.diagnostics);
      expect(JSON.stringify(d)).not.toContain('pwned');
      expect(Object.keys(d).sort()).toEqual(['failure', 'outcome', 'phase', 'placement', 'timings', 'truncated', 'version']);
      expect(BrowserPhase.options).toContain(d.phase);
      expect(BrowserOutcome.options).toContain(d.outcome);
      expect(BrowserFailure.options).toContain(d.failure);
      expect(BrowserPlacement.options).toContain(d.placement);
    }
    await provider.close(run('r-forged'));
  });
});

describe('the loopback switch', () => {
  it('refuses loopback with the switch off, before any browser starts', async () => {
    const strict = new ChromiumBrowserProvider({ egress: new DefaultEgressPolicy({ allowHttp: true }) });
    try {
      const refused = await strict.open(run('r-strict'), `${server.origin}/`, bounds());
      expect(refused).toMatchObject({ ok: false, failure: 'destination_refused' });
      expect(refused.diagnostics).toMatchObject({ placement: 'not_started', outcome: 'refused' });
      expect(strict.openBrowsers).toBe(0);
    } finally {
      await strict.closeAll();
    }
  });
});
