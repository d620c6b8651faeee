import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { domainPartition, isValidToolName, RESERVED_DOMAINS, toolDomain, ToolSpec } from '@veetbot/domain';
import { describe, expect, it } from 'vitest';
import { BUILTIN_TOOL_NAMES, createBuiltinTools } from '../src/builtin-tools';
import { JSON_SCHEMA_DIALECT } from '../src/builtin-spec';

const tools = createBuiltinTools();
const byName = new Map(tools.map((t) => [t.spec.name, t.spec]));

describe('builtin declarations', () => {
  it('returns one tool per BUILTIN_TOOL_NAMES entry, in order, with unique names', () => {
    expect(tools.map((t) => t.spec.name)).toEqual([...BUILTIN_TOOL_NAMES]);
    expect(new Set(BUILTIN_TOOL_NAMES).size).toBe(BUILTIN_TOOL_NAMES.length);
  });

  it.each(tools.map((t) => [t.spec.name, t.spec] as const))('%s is a parsed ToolSpec in a builtin domain', (name, spec) => {
    expect(ToolSpec.parse(spec)).toEqual(spec);
    expect(isValidToolName(name)).toBe(true);
    expect(RESERVED_DOMAINS.has(toolDomain(name))).toBe(false);
    expect(domainPartition(toolDomain(name))?.sources).toContain('builtin');
    expect(spec).toMatchObject({
      kind: 'capability',
      source: 'builtin',
      target_kind: 'in_process',
      server_id: null,
      device_id: null,
      deprecated: false,
    });
    expect(spec.output_schema).not.toBeNull();
  });

  // The classification the README documents; a change to any of it is deliberate.
  it.each([
    ['math.evaluate', 'none', 'low', 'read_only', true],
    ['system.time', 'none', 'low', 'read_only', true],
    ['workspace.read_text', 'workspace_read', 'low', 'read_only', true],
    ['workspace.list', 'workspace_read', 'low', 'read_only', true],
    ['workspace.write_text', 'workspace_write', 'medium', 'idempotent', false],
    ['demo.external_write', 'external_write', 'medium', 'non_idempotent', false],
  ] as const)('%s is %s / %s / %s, allow_parallel %s, output_trust internal_tool', (name, sideEffect, risk, idempotency, parallel) => {
    expect(byName.get(name)).toMatchObject({
      side_effect: sideEffect,
      risk,
      idempotency,
      allow_parallel: parallel,
      output_trust: 'internal_tool',
    });
  });
});

type Schema = Record<string, unknown>;

/** Every string bounded, every object closed, every array typed: walk a schema and list lapses. */
function looseSpots(schema: Schema, where: string): string[] {
  const found: string[] = [];
  if (schema.type === 'string' && schema.enum === undefined && typeof schema.maxLength !== 'number')
    found.push(`${where}: unbounded string`);
  if (schema.type === 'integer' && (typeof schema.minimum !== 'number' || typeof schema.maximum !== 'number') && where.includes('input')) {
    found.push(`${where}: unbounded integer`);
  }
  if (schema.type === 'object') {
    if (schema.additionalProperties !== false) found.push(`${where}: additionalProperties is not false`);
    const properties = (schema.properties ?? {}) as Record<string, Schema>;
    for (const required of (schema.required ?? []) as string[]) {
      if (!(required in properties)) found.push(`${where}: required "${required}" is not a property`);
    }
    for (const [key, child] of Object.entries(properties)) found.push(...looseSpots(child, `${where}.${key}`));
  }
  if (schema.type === 'array') {
    if (schema.items === undefined) found.push(`${where}: array without items`);
    else found.push(...looseSpots(schema.items as Schema, `${where}[]`));
  }
  return found;
}

describe('schemas', () => {
  it.each(tools.map((t) => [t.spec.name, t.spec] as const))('%s declares tight draft 2020-12 schemas', (name, spec) => {
    expect(spec.input_schema.$schema).toBe(JSON_SCHEMA_DIALECT);
    expect(spec.input_schema.type).toBe('object');
    expect(spec.output_schema?.$schema).toBe(JSON_SCHEMA_DIALECT);
    expect(looseSpots(spec.input_schema, `${name}.input`)).toEqual([]);
    expect(looseSpots(spec.output_schema as Schema, `${name}.output`).filter((s) => !s.includes('unbounded string'))).toEqual([]);
    expect(JSON.stringify(spec.input_schema).length).toBeLessThan(32 * 1024);
  });

  it('the line pattern of demo.external_write refuses line breaks', () => {
    const pattern = ((byName.get('demo.external_write')!.input_schema.properties as Record<string, Schema>).line as Schema)
      .pattern as string;
    const re = new RegExp(pattern, 'u');
    expect(re.test('one line\twith a tab')).toBe(true);
    expect(re.test('two\nlines')).toBe(false);
    expect(re.test('carriage\rreturn')).toBe(false);
  });

  it('the timezone pattern admits IANA names and nothing shaped like a path or offset', () => {
    const pattern = ((byName.get('system.time')!.input_schema.properties as Record<string, Schema>).timezone as Schema).pattern as string;
    const re = new RegExp(pattern, 'u');
    for (const ok of ['UTC', 'Europe/Paris', 'America/Argentina/Buenos_Aires', 'Etc/GMT+5', 'Etc/GMT-14'])
      expect(re.test(ok), ok).toBe(true);
    for (const bad of ['../etc', '/UTC', '+05:00', 'Europe/Paris\n', '']) expect(re.test(bad), bad).toBe(false);
  });
});

describe('import boundary (ARCHITECTURE.md: tools-builtin may import domain, ports and node stdlib)', () => {
  const srcDir = fileURLToPath(new URL('../src', import.meta.url));
  const files = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
      d.isDirectory() ? files(path.join(dir, d.name)) : d.name.endsWith('.ts') ? [path.join(dir, d.name)] : [],
    );

  it.each(files(srcDir).map((f) => [path.relative(srcDir, f), f] as const))('%s imports only what it may', (_rel, file) => {
    const source = readFileSync(file, 'utf8');
    const imports = [...source.matchAll(/^(import|export)\s+(type\s+)?[^'"]*?from\s+'([^']+)'/gm)].map((m) => ({
      typeOnly: m[2] !== undefined,
      from: m[3] as string,
    }));
    for (const { typeOnly, from } of imports) {
      const allowed =
        from.startsWith('./') ||
        from.startsWith('../') ||
        from.startsWith('node:') ||
        from === '@veetbot/domain' ||
        (from === '@veetbot/ports' && typeOnly);
      expect(allowed, `${from}${typeOnly ? ' (type)' : ''}`).toBe(true);
    }
    expect(source).not.toMatch(/\beval\s*\(|new\s+Function\s*\(/);
  });
});
