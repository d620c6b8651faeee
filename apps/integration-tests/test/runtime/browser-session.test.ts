import { ChromiumBrowserProvider } from '@veetbot/browser-provider';
import type { Principal } from '@veetbot/domain';
import { DefaultEgressPolicy } from '@veetbot/mcp-adapter';
import { createBrowserTools } from '@veetbot/tools-builtin';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { drivers } from '../../src';
import { html, WebPageServer } from '../../src/web-pages';
import { callOf, useHarness } from './fixtures';

/**
 * Issue 29 (docs/adr/0079): a session pins the browser tools and runs them through
 * Runtime.submitStep on the real stores, with real chromium inside bubblewrap behind the
 * platform's egress proxy (loopback admitted by the test-only switch). The page's evidence key
 * reaches the breaker (§ New evidence): a page re-observed unchanged is a loop at the fifth
 * identical snapshot, one that changed restarts the count.
 */
let pages: WebPageServer;
let provider: ChromiumBrowserProvider;
beforeAll(async () => {
  pages = await WebPageServer.start();
  provider = new ChromiumBrowserProvider({ egress: new DefaultEgressPolicy(), allowLoopback: true });
});
afterAll(async () => {
  await provider.closeAll();
  await pages.close();
});

describe.each(drivers())('a session pinning the browser tools on %s', (driver) => {
  const harness = useHarness(driver);

  it('pins them, opens and snapshots a page through submitStep, and trips the loop breaker on the fifth unchanged snapshot', async () => {
    const h = await harness({ tools: createBrowserTools(provider) });
    const principal: Principal = { ...h.principal, scopes: [...h.principal.scopes, 'browser.read', 'browser.write'] };
    let version = 0;
    const changing = pages.route(`/browser-changing-${driver}`, (request, response) => {
      version += 1;
      html(`<title>Counter</title><h1>visit ${version}</h1>`)(request, response);
    });
    const steady = pages.route(`/browser-steady-${driver}`, html('<title>Steady</title><h1>the same</h1><button>Go</button>'));

    const session = await h.runtime.openSession(
      h.tenantId,
      principal,
      { agentId: 'agent' },
      { flags: {}, targetKinds: ['in_process', 'browser_provider'] },
    );
    expect(session.toolNames).toEqual(expect.arrayContaining(['browser.open', 'browser.snapshot', 'browser.click', 'browser.close']));
    const run = await h.runtime.createRun(h.tenantId, session.id, { deadlineAt: new Date(h.clock.now().getTime() + 3_600_000) });
    const call = (step: number, name: string, args: unknown) =>
      h.runtime.submitStep({ ...h.step(run.id, step, [callOf(`b${step}`, name, args, ['user'])]), principal });

    // Two opens of a page that changes between them: different evidence, no loop.
    const first = await call(1, 'browser.open', { url: changing });
    expect(first.items[0]?.outcome).toMatchObject({ status: 'succeeded', action: 'browser.open' });
    expect(JSON.stringify(first.items[0])).toContain('visit 1');
    expect(JSON.stringify(first.items[0])).not.toMatch(/evidence/);

    const opened = await call(2, 'browser.open', { url: steady });
    expect(opened.items[0]?.outcome.status).toBe('succeeded');
    // The same page snapshotted four times succeeds; the fifth identical call is a loop.
    for (let step = 3; step <= 6; step++) {
      const outcome = await call(step, 'browser.snapshot', {});
      expect(outcome.items[0]?.outcome.status).toBe('succeeded');
      expect(JSON.stringify(outcome.items[0])).toContain('the same');
    }
    const fifth = await call(7, 'browser.snapshot', {});
    expect(fifth.items[0]?.outcome.reason_code).toBe('tool.loop_detected');
    expect(version).toBe(1);
  });

  it('does not offer the browser tools to a session whose environment has no browser_provider target', async () => {
    const h = await harness({ tools: createBrowserTools(provider) });
    const session = await h.runtime.openSession(h.tenantId, h.principal, { agentId: 'agent' }, { flags: {}, targetKinds: ['in_process'] });
    expect(session.toolNames.filter((name) => name.startsWith('browser.'))).toEqual([]);
  });
});
