import { describe, expect, it } from 'vitest';
import { AjvSchemaValidator } from '@veetbot/validation';
import { cutUtf8 } from '../src/mapping/description';
import { scanHeaderDeclarations } from '../src/mapping/header-declarations';
import { mapCatalog } from '../src/mapping/map-catalog';
import { readRemoteCatalog } from '../src/mapping/remote-catalog';
import { translateToDraft2020 } from '../src/mapping/schema-translation';
import { validateServerConfig, DefaultEgressPolicy, type McpServerConfig } from '../src/index';

const validator = new AjvSchemaValidator();
const config = (() => {
  const v = validateServerConfig(
    {
      serverId: 'acme',
      transport: 'http',
      endpoint: 'https://mcp.example.com/',
      authScheme: 'none',
      timeoutSeconds: 20,
      maximumOutputBytes: 50_000,
      requiredScopes: ['mcp.acme.use'],
    },
    { source: 'tenant', egress: new DefaultEgressPolicy() },
  );
  if (!v.ok) throw new Error('config');
  return v.config;
})();
const objectSchema = { type: 'object', properties: { q: { type: 'string' } } };
const tool = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  description: `does ${name}`,
  inputSchema: objectSchema,
  ...extra,
});
const map = (tools: unknown[], cfg: McpServerConfig = config, resources = false) =>
  mapCatalog(cfg, readRemoteCatalog(tools), validator, { resources });

function nested(depth: number): Record<string, unknown> {
  let schema: Record<string, unknown> = { type: 'string' };
  for (let i = 0; i < depth; i++) schema = { type: 'object', properties: { n: schema } };
  return schema;
}

describe('mapping a remote catalog (§ Discovery mapping table)', () => {
  it('normalizes names under mcp.{server_id}. and forces or derives every field', () => {
    const mapping = map([tool('Create-Ticket'), tool('list files')]);
    expect(mapping.tools.map((t) => t.spec.name).sort()).toEqual(['mcp.acme.create_ticket', 'mcp.acme.list_files']);
    const spec = mapping.tools.find((t) => t.remoteName === 'Create-Ticket')!.spec;
    expect(spec).toMatchObject({
      version: mapping.catalogHash,
      description: 'does Create-Ticket',
      input_schema: objectSchema,
      output_schema: null,
      side_effect: 'external_write',
      risk: 'high',
      idempotency: 'non_idempotent',
      required_scopes: ['mcp.acme.use'],
      timeout_seconds: 20,
      maximum_output_bytes: 50_000,
      allow_parallel: false,
      output_trust: 'external_untrusted',
      source: 'mcp',
      server_id: 'acme',
      target_kind: 'mcp',
      model_visible: true,
    });
  });

  it('the server cannot classify itself: annotations and outputSchema are ignored', () => {
    const mapping = map([tool('t', { annotations: { readOnlyHint: true, destructiveHint: false }, outputSchema: { type: 'object' } })]);
    expect(mapping.tools[0]!.spec).toMatchObject({ side_effect: 'external_write', idempotency: 'non_idempotent', output_schema: null });
  });

  it('same-server collisions after normalization drop both tools and report both names', () => {
    const mapping = map([tool('get-user'), tool('get_user'), tool('other')]);
    expect(mapping.tools.map((t) => t.remoteName)).toEqual(['other']);
    expect(mapping.conflicts).toEqual([{ registryName: 'mcp.acme.get_user', remoteNames: ['get-user', 'get_user'] }]);
  });

  it('a remote tool named read_resource collides with the synthetic resource tool when resources are offered', () => {
    expect(map([tool('read_resource')], config, true).conflicts).toHaveLength(1);
    expect(map([tool('read_resource')], config, false).tools).toHaveLength(1);
  });

  it('cuts the description to 1,024 UTF-8 bytes at a character boundary', () => {
    const long = `${'é'.repeat(600)}tail`;
    const mapping = map([tool('d', { description: long })]);
    const description = mapping.tools[0]!.spec.description as string;
    expect(Buffer.byteLength(description, 'utf8')).toBe(1024);
    expect(description).toBe('é'.repeat(512));
    expect(cutUtf8('a😀b', 3)).toBe('a');
    expect(cutUtf8('a😀b', 5)).toBe('a😀');
  });

  it('a rejected schema drops only that tool: a megabyte schema, a 20-deep schema, a remote $ref', () => {
    const huge = {
      type: 'object',
      properties: Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`p${i}`, { type: 'string', description: 'x'.repeat(40) }])),
    };
    const mapping = map([
      tool('ok'),
      tool('huge', { inputSchema: huge }),
      tool('deep', { inputSchema: nested(20) }),
      tool('remote', { inputSchema: { type: 'object', properties: { a: { $ref: 'https://evil.example.com/schema.json' } } } }),
      tool('not_object', { inputSchema: { type: 'string' } }),
      { name: 'no_schema' },
    ]);
    expect(mapping.tools.map((t) => t.remoteName)).toEqual(['ok']);
    expect(Object.fromEntries(mapping.rejected.map((r) => [r.remoteName, r.reason]))).toEqual({
      huge: 'schema.too_large',
      deep: 'schema.too_deep',
      remote: 'schema.remote_ref',
      not_object: 'schema.not_object',
      no_schema: 'schema.invalid',
    });
  });

  it('veetbot/application-only: true hides the tool from the model; anything else does not', () => {
    const mapping = map([
      tool('hidden', { _meta: { 'veetbot/application-only': true } }),
      tool('truthy', { _meta: { 'veetbot/application-only': 'true' } }),
      tool('plain'),
    ]);
    const visible = Object.fromEntries(mapping.tools.map((t) => [t.remoteName, t.spec.model_visible]));
    expect(visible).toEqual({ hidden: false, truthy: true, plain: true });
  });

  it('the catalog hash is stable under key order and tool order, and changes with any declaration', () => {
    const a = readRemoteCatalog([
      tool('x'),
      { inputSchema: { properties: { q: { type: 'string' } }, type: 'object' }, description: 'does y', name: 'y' },
    ]);
    const b = readRemoteCatalog([tool('y'), tool('x')]);
    expect(a.catalogHash).toBe(b.catalogHash);
    expect(a.catalogHash).toMatch(/^[0-9a-f]{64}$/);
    expect(readRemoteCatalog([tool('x'), tool('y', { description: 'changed' })]).catalogHash).not.toBe(a.catalogHash);
    expect(readRemoteCatalog([tool('x'), tool('y', { _meta: { k: 1 } })]).catalogHash).not.toBe(a.catalogHash);
    // A server's title or annotations are not part of the identity.
    expect(readRemoteCatalog([tool('x', { title: 'X' }), tool('y', { annotations: { readOnlyHint: true } })]).catalogHash).toBe(
      a.catalogHash,
    );
  });

  it('translates draft-07 declarations to 2020-12 before admission', () => {
    const draft7 = {
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      definitions: { id: { type: 'string' } },
      properties: {
        id: { $ref: '#/definitions/id' },
        pair: { type: 'array', items: [{ type: 'string' }, { type: 'number' }], additionalItems: false },
      },
      dependencies: { id: ['pair'] },
    };
    const translated = translateToDraft2020(draft7);
    expect(translated).toEqual({
      ok: true,
      schema: {
        type: 'object',
        $defs: { id: { type: 'string' } },
        properties: {
          id: { $ref: '#/$defs/id' },
          pair: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'number' }], items: false },
        },
        dependentRequired: { id: ['pair'] },
      },
    });
    expect(map([tool('d7', { inputSchema: draft7 })]).tools).toHaveLength(1);
    // Without a dialect marker the schema is taken as 2020-12, unchanged.
    expect(translateToDraft2020(objectSchema)).toEqual({ ok: true, schema: objectSchema });
  });
});

describe('SEP-2243 x-mcp-header declarations (docs/adr/0064)', () => {
  it('collects the declarations along the properties chain, at any depth', () => {
    expect(
      scanHeaderDeclarations({
        type: 'object',
        properties: {
          region: { type: 'string', 'x-mcp-header': 'Region' },
          target: { type: 'object', properties: { zone: { type: 'integer', 'x-mcp-header': 'Zone' } } },
          plain: { type: 'string' },
        },
      }),
    ).toEqual({
      kind: 'valid',
      declarations: [
        { path: ['region'], headerName: 'Region' },
        { path: ['target', 'zone'], headerName: 'Zone' },
      ],
    });
  });

  it('an annotation under a draft-07 keyword the dialect translation rewrites is invalid already, before it becomes one the SDK visits', () => {
    for (const schema of [
      {
        type: 'object',
        properties: { t: { type: 'array', items: [{ type: 'string' }], additionalItems: { type: 'string', 'x-mcp-header': 'A' } } },
      },
      { type: 'object', properties: {}, dependencies: { a: { properties: { b: { type: 'string', 'x-mcp-header': 'B' } } } } },
    ])
      expect(scanHeaderDeclarations(schema).kind, JSON.stringify(schema)).toBe('invalid');
  });

  it('a schema too deep or too wide to walk is unscannable (admission rejects it on its own caps), never a stack overflow', () => {
    expect(scanHeaderDeclarations(nested(5_000)).kind).toBe('unscannable');
    const wide = {
      type: 'object',
      properties: Object.fromEntries(Array.from({ length: 25_000 }, (_, i) => [`p${i}`, { type: 'string' }])),
    };
    expect(scanHeaderDeclarations(wide).kind).toBe('unscannable');
    expect(scanHeaderDeclarations(null)).toEqual({ kind: 'valid', declarations: [] });
  });

  it('mapCatalog excludes an invalid declaration only where the connection mirrors headers', () => {
    const bad = tool('bad', { inputSchema: { type: 'object', properties: { v: { type: 'number', 'x-mcp-header': 'V' } } } });
    expect(map([bad]).tools).toHaveLength(1);
    const mirrored = mapCatalog(config, readRemoteCatalog([bad, tool('good')]), validator, { resources: false, mirrorsParamHeaders: true });
    expect(mirrored.tools.map((t) => t.remoteName)).toEqual(['good']);
    expect(mirrored.rejected).toEqual([{ remoteName: 'bad', reason: 'mcp.tool.x_mcp_header_invalid' }]);
  });
});
