import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { VeetbotClient } from '@veetbot/client';
import { provisionTenantKey } from '@veetbot/composition';
import { createStores, openDatabase, type Database } from '@veetbot/store-postgres';
import { chromium, type Browser, type BrowserContext, type Page, type Route } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO, startScene, until, type E2eScene } from '../src/e2e-processes';
import { ScriptableHttpServer, stopAllServers } from '../src/mcp-servers';

/**
 * The operator console (issue 15 part 2; docs/adr/0046, 0047) in a real browser — Debian's
 * chromium driven by playwright-core — against the real api and worker processes on
 * PostgreSQL. The console is only a client of the /v1 API: every check here goes through what a
 * person sees and clicks. Screenshots go to apps/integration-tests/test-output/console
 * (gitignored).
 */
const CHROMIUM = '/usr/bin/chromium';
const SHOTS = join(REPO, 'apps', 'integration-tests', 'test-output', 'console');
/** Untrusted text a tool argument, a result or an error may carry: it must be shown as text. */
const HOSTILE = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2"><b>bold?</b>';

let scene: E2eScene;
let server: ScriptableHttpServer;
let database: Database;
let browser: Browser;
let agentA: VeetbotClient;
let approverKeyA: string;
let approverKeyB: string;
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  if (!existsSync(CHROMIUM))
    throw new Error(
      'chromium (/usr/bin/chromium) is missing: run `sh scripts/ensure-chromium.sh` as root, or `sudo apt-get install -y chromium`',
    );
  await mkdir(SHOTS, { recursive: true });
  server = await ScriptableHttpServer.start();
  scene = await startScene({
    workers: 1,
    // A short lease, so a killed worker's call is recovered (UNCERTAIN) within seconds.
    workerEnv: { VEETBOT_LEASE_TTL_MS: '3000', VEETBOT_WORKER_SWEEP_MS: '500' },
    operatorConfig: { mcp: { servers: [], tenant_egress: { allow_http: true, allow_private_addresses: true } } },
  });
  database = await openDatabase({ url: scene.url, poolSize: 2 });
  const stores = createStores(database);
  const key = async (tenantId: string, principalId: string, scopes: string[]) =>
    (await provisionTenantKey(stores, { tenantId, tenantName: tenantId, principalId, scopes, now: new Date() })).key;
  const agentKeyA = await key('tenant-a', 'agent-a', ['demo.write', 'workspace.read', 'workspace.write', 'mcp.*', 'mcp.servers.write']);
  approverKeyA = await key('tenant-a', 'approver-a', ['approvals.decide', 'review.resolve', 'mcp.servers.write']);
  approverKeyB = await key('tenant-b', 'approver-b', ['approvals.decide', 'review.resolve', 'mcp.servers.write']);
  agentA = new VeetbotClient({ baseUrl: scene.baseUrl, apiKey: agentKeyA });
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
}, 180_000);

afterAll(async () => {
  for (const context of contexts) await context.close().catch(() => undefined);
  await browser?.close();
  await database?.close();
  await scene?.close();
  await stopAllServers();
});

async function signedIn(apiKey: string): Promise<Page> {
  const context = await browser.newContext({ acceptDownloads: true });
  contexts.push(context);
  const page = await context.newPage();
  const response = await page.goto(`${scene.baseUrl}/console`);
  expect(response?.status()).toBe(200);
  await page.fill('#api-key', apiKey);
  await page.click('button[type=submit]');
  await page.locator('nav button[data-view=approvals][aria-current=page]').waitFor();
  return page;
}

async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
}

async function waitingRun(line: string): Promise<{ runId: string }> {
  const session = await agentA.openSession({ agent_id: 'console-agent', enabled_tools: ['demo.external_write', 'workspace.*', 'mcp.*'] });
  const run = await agentA.createRun({ session_id: session.id, deadline_seconds: 600 });
  // External text in the turn: policy asks a person before this write (the default profile).
  const submitted = await agentA.submitStep(run.id, {
    step_number: 1,
    calls: [{ call_id: 'w1', tool_name: 'demo.external_write', arguments: { line }, context_trust: ['user', 'external_untrusted'] }],
    wait_seconds: 0,
  });
  expect([200, 202]).toContain(submitted.status);
  return { runId: run.id };
}

/** Holds the console's poll of the queue for 3 s (so the test's write lands before the redraw). */
const holdFor3s = (route: Route) =>
  new Promise<void>((resolve) => setTimeout(() => resolve(route.continue().catch(() => undefined)), 3000));

/** A statement as the database owner (the test stands in for another process's write). */
async function sql(text: string, values: unknown[]): Promise<void> {
  if (database.native.driver !== 'postgres') throw new Error('PostgreSQL only');
  await database.native.pool.query(text, values);
}

// Browser-side expressions as text: this package compiles without the DOM library.
const pwned = (page: Page) => page.evaluate<number | null>('window.__pwned ?? null');

describe('the operator console in chromium', () => {
  it('is served with a strict CSP; signs in with a key kept in session storage only', async () => {
    const response = await fetch(`${scene.baseUrl}/console`);
    const csp = response.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).not.toContain('unsafe-eval');
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');

    const page = await signedIn(approverKeyA);
    const stored = await page.evaluate(
      '({ session: Object.keys(sessionStorage), local: Object.keys(localStorage), cookie: document.cookie })',
    );
    expect(stored).toEqual({ session: ['veetbot.console.api_key'], local: [], cookie: '' });
    await shot(page, '01-signed-in');

    // A bad key is refused with the API's own code, and nothing is kept.
    const other = await (await browser.newContext()).newPage();
    await other.goto(`${scene.baseUrl}/console`);
    await other.fill('#api-key', 'vbk_not_a_key');
    await other.click('button[type=submit]');
    await expect.poll(() => other.locator('[role=alert]').first().textContent(), { timeout: 20_000 }).toContain('auth.invalid');
    expect(await other.evaluate('Object.keys(sessionStorage)')).toEqual([]);
    await other.context().close();
  });

  it('a pending approval appears live with its hash and policy version, its arguments as text; approving it completes the step', async () => {
    const page = await signedIn(approverKeyA);
    const { runId } = await waitingRun(HOSTILE);
    // Live: the card appears without a reload.
    const card = page.locator('article[data-approval-id]').filter({ hasText: 'demo.external_write' }).first();
    await card.waitFor({ timeout: 30_000 });
    const args = await card.locator('[data-testid=arguments]').textContent();
    expect(args).toContain(HOSTILE.replaceAll('"', '\\"'));
    expect(await card.locator('img, script, b').count()).toBe(0);
    expect(await card.locator('[data-testid=arguments-hash]').textContent()).toMatch(/^[0-9a-f]{64}$/);
    expect(await card.locator('[data-testid=policy-rule]').textContent()).toBe('external-write-needs-approval');
    expect(await card.locator('[data-testid=policy-version]').textContent()).toMatch(/^default@[0-9a-f]{16}$/);
    await shot(page, '02-approval-pending');

    await card.locator('button[data-action=approve]').click();
    await expect.poll(() => page.locator('#decision-log').textContent(), { timeout: 20_000 }).toContain('Approved');

    // The run view: the step completes, live over the run's event stream.
    await page.click('nav button[data-view=runs]');
    await page.fill('input[name=run-id]', runId);
    await page.click('form button[type=submit]');
    await page.locator('tr[data-call-id=w1][data-status=succeeded]').waitFor({ timeout: 30_000 });
    await page.locator('#run-events [data-event-type="approval.decided"]').waitFor();
    expect(await pwned(page)).toBeNull();
    expect((await scene.outboxLines()).filter((l) => l.includes('__pwned'))).toHaveLength(1);
    await shot(page, '03-step-completed');
  });

  it('an artifact downloads with its sha256 shown and checked', async () => {
    const session = await agentA.openSession({ agent_id: 'console-agent', enabled_tools: ['workspace.*'] });
    const run = await agentA.createRun({ session_id: session.id, deadline_seconds: 600 });
    const big = `${'x'.repeat(6000)}\n`;
    const outcome = await agentA.submitStepAndWait(run.id, {
      step_number: 1,
      calls: [{ call_id: 'write', tool_name: 'workspace.write_text', arguments: { path: 'big.txt', text: big }, context_trust: ['user'] }],
    });
    expect(outcome.items[0]?.outcome.status, JSON.stringify(outcome.items[0])).toBe('succeeded');
    const read = await agentA.submitStepAndWait(run.id, {
      step_number: 2,
      calls: [{ call_id: 'read', tool_name: 'workspace.read_text', arguments: { path: 'big.txt' }, context_trust: ['user'] }],
    });
    expect(read.items[0]?.outcome.status).toBe('succeeded');

    const page = await signedIn(approverKeyA);
    await page.click('nav button[data-view=runs]');
    await page.fill('input[name=run-id]', run.id);
    await page.click('form button[type=submit]');
    const button = page.locator('tr[data-call-id=read] button[data-artifact-id]');
    await button.waitFor({ timeout: 30_000 });
    const [download] = await Promise.all([page.waitForEvent('download'), button.click()]);
    const sha = await page.locator('tr[data-call-id=read] [data-testid=artifact-sha256]').textContent();
    expect(sha).toMatch(/sha256 [0-9a-f]{64} \(matches the recorded sha256\)/);
    const path = await download.path();
    expect(path).not.toBeNull();
    await shot(page, '04-artifact');
  });

  it('an approval whose policy version (or arguments hash) changed since the console read it is refused, and redrawn with what it holds now', async () => {
    const page = await signedIn(approverKeyA);
    await waitingRun('stale decision line');
    const card = page.locator('article[data-approval-id]').filter({ hasText: 'stale decision line' }).first();
    await card.waitFor({ timeout: 30_000 });
    const approvalId = (await card.getAttribute('data-approval-id')) ?? '';
    const shown = await card.getAttribute('data-policy-version');

    // Between reading and clicking, the approval is asked again under another policy version
    // (the write veetbot_request_approval makes on a re-ask; the API test drives the real one).
    // The page's poll would redraw the card, so hold the poll's requests while this happens.
    await page.route('**/v1/approvals?*', holdFor3s);
    await sql('UPDATE approvals SET policy_version = $1 WHERE id = $2', ['default@feedfacefeedface', approvalId]);
    await card.locator('button[data-action=approve]').click();
    await expect.poll(() => page.locator('#decision-log').textContent(), { timeout: 20_000 }).toContain('approval.policy_changed');
    await page.unroute('**/v1/approvals?*');
    await shot(page, '05-policy-changed-refused');
    // The refusal re-queued the step (docs/adr/0047): its policy step asks again under the
    // current version, so the row leaves the forged one — when is the worker's, which is why the
    // page is not asked to catch the forged version in between. Nothing was decided; the card
    // is redrawn with what the approval holds now.
    expect(shown).not.toBe('default@feedfacefeedface');
    const stores = createStores(database);
    await expect
      .poll(async () => (await stores.approvals.get('tenant-a', approvalId))?.policyVersion, { timeout: 20_000 })
      .not.toBe('default@feedfacefeedface');
    const row = await stores.approvals.get('tenant-a', approvalId);
    expect(row).toMatchObject({ status: 'pending', decidedBy: null });
    await page
      .locator(`article[data-approval-id="${approvalId}"][data-policy-version="${row?.policyVersion ?? ''}"]`)
      .waitFor({ timeout: 15_000 });

    // The same for the arguments hash.
    await page.route('**/v1/approvals?*', holdFor3s);
    await sql('UPDATE approvals SET arguments_hash = $1 WHERE id = $2', ['0'.repeat(64), approvalId]);
    await page.locator(`article[data-approval-id="${approvalId}"] button[data-action=deny]`).click();
    await expect.poll(() => page.locator('#decision-log').textContent(), { timeout: 20_000 }).toContain('approval.arguments_changed');
    await page.unroute('**/v1/approvals?*');
    expect(await createStores(database).approvals.get('tenant-a', approvalId)).toMatchObject({ status: 'pending' });
    expect((await scene.outboxLines()).filter((l) => l.includes('stale decision line'))).toHaveLength(0);
  });

  it('an UNCERTAIN call is shown with what was sent, its watermark and evidence, and resolved not_applied with a required note (audited)', async () => {
    // A non-idempotent external write on the tenant's own MCP server: the worker marks the
    // effect sent, the server holds the call, and the worker is SIGKILLed — the recovery table
    // makes the row UNCERTAIN in the worker that takes the run over.
    const registered = await fetch(`${scene.baseUrl}/v1/mcp/servers`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${approverKeyA}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({
        server_id: 'tickets',
        transport: 'http',
        endpoint: server.url,
        auth_scheme: 'none',
        side_effect: 'external_write',
        risk: 'low',
        idempotency: 'non_idempotent',
      }),
    });
    expect(registered.status, await registered.clone().text()).toBe(201);
    const session = await agentA.openSession({ agent_id: 'console-agent', enabled_tools: ['mcp.tickets.slow'] });
    expect(session.tools.map((t) => t.name)).toContain('mcp.tickets.slow');
    const run = await agentA.createRun({ session_id: session.id, deadline_seconds: 600 });
    await agentA.submitStep(run.id, {
      step_number: 1,
      calls: [{ call_id: 'held', tool_name: 'mcp.tickets.slow', arguments: { ms: 600_000 }, context_trust: ['user'] }],
      wait_seconds: 0,
    });
    await until(
      () => server.counts(),
      (c) => (c.calls.slow ?? 0) === 1,
      30_000,
      'the call reaching the server',
    );
    const victim = scene.workers[0]!;
    victim.child.kill('SIGKILL');
    await victim.exited;
    await scene.startWorker();
    const uncertain = await until(
      async () => (await agentA.listInvocations({ run_id: run.id })).invocations[0],
      (row) => row?.status === 'uncertain',
      60_000,
      'the recovered row',
    );
    expect(uncertain?.effect_sent_at).not.toBeNull();

    const page = await signedIn(approverKeyA);
    await page.click('nav button[data-view=review]');
    const card = page.locator(`article[data-invocation-id="${uncertain!.id}"]`);
    await card.waitFor({ timeout: 30_000 });
    expect(await card.locator('[data-testid=sent]').textContent()).toContain('600000');
    expect(await card.locator('[data-testid=watermark]').textContent()).toContain(uncertain!.effect_sent_at!);
    expect(await card.locator('[data-testid=evidence]').textContent()).toContain('"error"');
    // docs/adr/0063: an MCP tool has no reconciler yet; the card says nobody looked.
    expect(await card.locator('[data-testid=reconciliation]').textContent()).toBe('No reconciler tried this call.');
    await shot(page, '06-uncertain');

    // The note is required.
    await card.locator('select[name=resolution]').selectOption('not_applied');
    await card.locator('button[type=submit]').click();
    await expect.poll(() => card.textContent(), { timeout: 20_000 }).toContain('A note is required');
    const note = `Checked the ticket system: no ticket was created. ${HOSTILE}`;
    await card.locator('textarea[name=note]').fill(note);
    await card.locator('button[type=submit]').click();
    const resolved = page.locator(`article[data-reviewed-id="${uncertain!.id}"]`);
    await resolved.waitFor({ timeout: 15_000 });
    expect(await resolved.textContent()).toContain('not_applied');
    expect(await resolved.textContent()).toContain('approver-a');
    expect(await resolved.locator('[data-testid=review-note]').textContent()).toBe(note);
    expect(await resolved.locator('img, script, b').count()).toBe(0);
    expect(await pwned(page)).toBeNull();
    await shot(page, '07-uncertain-resolved');
    const row = await agentA.getInvocation(uncertain!.id);
    expect(row.review).toMatchObject({ resolution: 'not_applied', note, reviewed_by: 'approver-a' });
  });

  it("MCP servers: the tenant's server with its status and catalog generations; disable and enable", async () => {
    const page = await signedIn(approverKeyA);
    await page.click('nav button[data-view=mcp]');
    const row = page.locator('tr[data-server-id=tickets]');
    await row.waitFor({ timeout: 30_000 }).catch(async (error: unknown) => {
      throw new Error(`no tickets row; the page says: ${await page.locator('#view').textContent()}`, { cause: error });
    });
    expect(await row.locator('[data-testid=enabled]').textContent()).toBe('enabled');
    await row.locator('button[data-catalog=tickets]').click();
    const generation = page.locator('#mcp-catalog article[data-catalog-hash]').first();
    await generation.waitFor({ timeout: 15_000 });
    expect(await generation.locator('[data-testid=diff]').textContent()).toContain('mcp.tickets.slow');
    await shot(page, '08-mcp-catalog');

    await row.locator('button[data-toggle=tickets]').click();
    await expect
      .poll(() => page.locator('tr[data-server-id=tickets] [data-testid=enabled]').textContent(), { timeout: 20_000 })
      .toBe('disabled');
    await page.locator('tr[data-server-id=tickets] button[data-toggle=tickets]').click();
    await expect
      .poll(() => page.locator('tr[data-server-id=tickets] [data-testid=enabled]').textContent(), { timeout: 20_000 })
      .toBe('enabled');
  });

  it("MCP authorizations (docs/adr/0080): the principal's own grants, never a token; Revoke deletes one; another principal sees none", async () => {
    // A sealed grant as the worker would store it: the console lists it without opening anything.
    const sealedBytes = Buffer.alloc(60, 7);
    for (const [principal, serverId] of [
      ['approver-a', 'tickets'],
      ['agent-a', 'agentonly'],
    ])
      await sql(
        `insert into mcp_delegated_grants (tenant_id, principal_id, server_id, ciphertext, key_id, issuer, expires_at, created_at, updated_at)
         values ('tenant-a', $1, $2, $3, 'k', 'https://auth.example.com', null, now(), now())`,
        [principal, serverId, sealedBytes],
      );
    const page = await signedIn(approverKeyA);
    await page.click('nav button[data-view=mcp]');
    const row = page.locator('#mcp-grants tr[data-grant=tickets]');
    await row.waitFor({ timeout: 30_000 });
    expect(await row.textContent()).toContain('https://auth.example.com');
    expect(await page.locator('#mcp-grants tr[data-grant=agentonly]').count()).toBe(0);
    await shot(page, '08b-mcp-authorizations');
    await row.locator('button[data-revoke=tickets]').click();
    await expect.poll(() => page.locator('#mcp-grants').textContent(), { timeout: 20_000 }).toContain('None granted');
    const left = await agentA.listMcpAuthorizations();
    expect(left.authorizations.map((a) => a.server_id)).toEqual(['agentonly']);
  });

  it("tenant B's key sees none of tenant A's approvals, reviews, runs or servers", async () => {
    // Tenant A still has a pending approval (the stale decision above) and a resolved review.
    expect((await agentA.listInvocations({ status: 'waiting_for_approval' })).invocations.length).toBeGreaterThan(0);
    const page = await signedIn(approverKeyB);
    await expect.poll(() => page.locator('#approvals-status').textContent(), { timeout: 20_000 }).toContain('Nothing is waiting');
    expect(await page.locator('article[data-approval-id]').count()).toBe(0);
    await page.click('nav button[data-view=review]');
    await expect.poll(() => page.locator('#view').textContent(), { timeout: 20_000 }).toContain('No UNCERTAIN call is waiting');
    expect(await page.locator('article[data-reviewed-id]').count()).toBe(0);
    await page.click('nav button[data-view=mcp]');
    await expect.poll(() => page.locator('#mcp-tenant').textContent(), { timeout: 20_000 }).toContain('None registered');
    await page.click('nav button[data-view=runs]');
    const runOfA = (await agentA.listInvocations({})).invocations[0]!.run_id;
    await page.fill('input[name=run-id]', runOfA);
    await page.click('form button[type=submit]');
    await expect.poll(() => page.locator('#run-detail').textContent(), { timeout: 20_000 }).toContain('not_found');
    expect(await page.locator('#recent-runs button').count()).toBe(0);
    await shot(page, '09-tenant-b');
  });
});
