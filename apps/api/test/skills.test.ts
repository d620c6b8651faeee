import { provisionTenantKey } from '@veetbot/composition';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VeetbotClient, type Skill, type SkillList } from '@veetbot/client';
import { errorOf, openApiHarness, type ApiHarness } from './harness';

/*
 * docs/adr/0036: the skills API. Operators author TRUSTED_CONFIGURATION skills; listing is the
 * advertised metadata block (never content); content needs skills.read; writes need skills.write;
 * an MCP prompt skill is the server's and cannot be deleted here.
 */
let h: ApiHarness;
let agentKey: string;
beforeAll(async () => {
  h = await openApiHarness({ worker: false });
  agentKey = (
    await provisionTenantKey(h.system.stores, {
      tenantId: h.a.tenantId,
      tenantName: h.a.tenantId,
      principalId: 'agent-only',
      scopes: ['skill.write', 'workspace.read'],
      now: new Date(),
    })
  ).key;
}, 120_000);
afterAll(async () => {
  await h.close();
});

const review = {
  name: 'code.review',
  description: 'How we review a pull request.',
  required_tools: ['workspace.read_text'],
  content: 'Read the diff first. Then the tests.',
};

describe('skills API', () => {
  it('POST creates an operator skill, trusted_configuration; a duplicate name and version is 409 skill.exists', async () => {
    const created = await h.call('POST', '/v1/skills', { body: review });
    expect(created.status).toBe(201);
    const skill = (await created.json()) as Skill;
    expect(skill).toMatchObject({ ...review, version: '1', source: 'operator', trust: 'trusted_configuration' });
    const stored = await h.system.stores.skills.get(h.a.tenantId, 'code.review');
    expect(stored).toMatchObject({ source: 'operator', trust: 'trusted_configuration', content: review.content });

    const again = await errorOf(await h.call('POST', '/v1/skills', { body: review }));
    expect(again).toMatchObject({ status: 409, code: 'skill.exists' });
    // Another version of the same name is a new row.
    expect((await h.call('POST', '/v1/skills', { body: { ...review, version: '2', content: 'v2' } })).status).toBe(201);
  });

  it('GET /v1/skills lists the latest version of each, metadata only', async () => {
    const listed = await h.call('GET', '/v1/skills');
    expect(listed.status).toBe(200);
    const body = (await listed.json()) as SkillList;
    const entry = body.skills.find((s) => s.name === 'code.review');
    expect(entry).toMatchObject({ version: '2', description: review.description, required_tools: review.required_tools });
    expect(JSON.stringify(body)).not.toContain('Read the diff');
    expect(JSON.stringify(body)).not.toContain('"content"');
  });

  it('GET /v1/skills/{name} returns content with skills.read, 403 without it, 404 for none or another tenant', async () => {
    const got = await h.call('GET', '/v1/skills/code.review');
    expect(got.status).toBe(200);
    expect(((await got.json()) as Skill).content).toBe('v2');
    expect(await errorOf(await h.call('GET', '/v1/skills/code.review', { key: agentKey }))).toMatchObject({
      status: 403,
      code: 'auth.scope_missing',
    });
    expect((await h.call('GET', '/v1/skills/no.such')).status).toBe(404);
    expect((await h.call('GET', '/v1/skills/code.review', { key: h.b.key })).status).toBe(404);
  });

  it('refuses what the grammar and bounds refuse, and the mcp. prefix', async () => {
    for (const body of [
      { ...review, name: 'Upper' },
      { ...review, name: 'x'.repeat(65) },
      { ...review, name: 'ok', content: 'é'.repeat(33 * 1024) },
      { ...review, name: 'ok', description: 'd'.repeat(1025) },
      { ...review, name: 'ok', required_tools: ['not a tool'] },
      { ...review, name: 'ok', extra: true },
    ]) {
      expect((await errorOf(await h.call('POST', '/v1/skills', { body }))).status, JSON.stringify(body).slice(0, 80)).toBe(400);
    }
    expect(await errorOf(await h.call('POST', '/v1/skills', { body: { ...review, name: 'mcp.docs.search' } }))).toMatchObject({
      status: 400,
      code: 'skill.name_reserved',
    });
  });

  it('writes need skills.write by name: neither skill.write (the tool scope) nor a wildcard is it', async () => {
    expect(await errorOf(await h.call('POST', '/v1/skills', { key: agentKey, body: { ...review, name: 'sneaky' } }))).toMatchObject({
      status: 403,
      code: 'auth.scope_missing',
    });
    expect((await h.call('DELETE', '/v1/skills/code.review', { key: agentKey })).status).toBe(403);
    // Granted by name only (EXPLICIT_SCOPES): a wildcard does not carry it.
    const wildcard = (
      await provisionTenantKey(h.system.stores, {
        tenantId: h.a.tenantId,
        tenantName: h.a.tenantId,
        principalId: 'wildcard',
        scopes: ['skills.*', 'skill.*'],
        now: new Date(),
      })
    ).key;
    expect((await h.call('POST', '/v1/skills', { key: wildcard, body: { ...review, name: 'sneaky' } })).status).toBe(403);
    expect((await h.call('GET', '/v1/skills/code.review', { key: wildcard })).status).toBe(403);
    expect(await h.system.stores.skills.get(h.a.tenantId, 'sneaky')).toBeNull();
  });

  it('DELETE removes every version; an MCP prompt skill is 409 skill.read_only; a missing one 404', async () => {
    await h.system.stores.skills.create(h.a.tenantId, {
      name: 'mcp.docs.summarize',
      version: 'abcdef0123456789',
      description: 'A server prompt.',
      requiredTools: [],
      content: 'Summarize.',
      trust: 'external_untrusted',
      source: 'mcp',
      createdAt: new Date(),
    });
    expect(await errorOf(await h.call('DELETE', '/v1/skills/mcp.docs.summarize'))).toMatchObject({ status: 409, code: 'skill.read_only' });
    expect(await h.system.stores.skills.get(h.a.tenantId, 'mcp.docs.summarize')).not.toBeNull();

    expect((await h.call('DELETE', '/v1/skills/code.review')).status).toBe(204);
    expect((await h.system.stores.skills.list(h.a.tenantId)).filter((s) => s.name === 'code.review')).toEqual([]);
    expect((await h.call('DELETE', '/v1/skills/code.review')).status).toBe(404);
  });

  it('the typed client round-trips, and the OpenAPI document names the routes and scopes', async () => {
    const client = new VeetbotClient({
      baseUrl: 'http://api.test',
      apiKey: h.a.key,
      fetch: (input, init) => h.api.app.request(input, init),
    });
    const created = await client.createSkill({
      name: 'deploy.checklist',
      description: 'Before a deploy.',
      content: 'Check the migrations.',
    });
    expect(created).toMatchObject({ name: 'deploy.checklist', version: '1', required_tools: [], trust: 'trusted_configuration' });
    expect((await client.listSkills()).skills.map((s) => s.name)).toContain('deploy.checklist');
    expect((await client.getSkill('deploy.checklist')).content).toBe('Check the migrations.');
    await client.deleteSkill('deploy.checklist');
    expect((await client.listSkills()).skills.map((s) => s.name)).not.toContain('deploy.checklist');

    const document = (await (await h.call('GET', '/v1/openapi.json', { key: null })).json()) as {
      paths: Record<string, Record<string, unknown>>;
    };
    expect(Object.keys(document.paths['/v1/skills'] ?? {}).sort()).toEqual(['get', 'post']);
    expect(Object.keys(document.paths['/v1/skills/{name}'] ?? {}).sort()).toEqual(['delete', 'get']);
  });
});
