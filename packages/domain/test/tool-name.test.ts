import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  RegistrationError,
  SERVER_ID_MAX_LENGTH,
  ToolName,
  VeetbotError,
  isValidServerId,
  isValidToolName,
  mcpToolName,
  normalizeRemoteToolName,
  toolDomain,
} from '../src/index';
import { TOOL_NAME_MAX_LENGTH } from '../src/tool-name';

// § The registry: Names, and the MCP normalization steps 1–5.

const sha7 = (s: string): string => createHash('sha256').update(s, 'utf8').digest('hex').slice(0, 7);

describe('isValidToolName (§ Names)', () => {
  it.each(['workspace.read_text', 'mcp.acme.create_ticket', 'a.b', 'math.add2', 'x1.y_2.z3', 'conversation.ask_user'])(
    'accepts %s',
    (name) => {
      expect(isValidToolName(name)).toBe(true);
      expect(ToolName.safeParse(name).success).toBe(true);
    },
  );

  it.each([
    ['no dot', 'workspace'],
    ['uppercase', 'Workspace.read_text'],
    ['uppercase later', 'workspace.readText'],
    ['hyphen', 'workspace.read-text'],
    ['leading digit in the domain', '1workspace.read'],
    ['leading digit in a later segment', 'workspace.2read'],
    ['leading digit in the last of three segments', 'mcp.acme.9tool'],
    ['leading underscore', '_workspace.read'],
    ['segment starting with underscore', 'workspace._read'],
    ['empty segment', 'workspace..read'],
    ['trailing dot', 'workspace.read.'],
    ['leading dot', '.workspace.read'],
    ['space', 'workspace.read text'],
    ['non-ASCII letter', 'workspace.réad'],
    ['empty', ''],
  ])('rejects %s (%s)', (_label, name) => {
    expect(isValidToolName(name)).toBe(false);
    expect(ToolName.safeParse(name).success).toBe(false);
  });

  it('allows 96 characters and refuses 97', () => {
    const at = (n: number): string => `a.${'b'.repeat(n - 2)}`;
    expect(TOOL_NAME_MAX_LENGTH).toBe(96);
    expect(at(96)).toHaveLength(96);
    expect(isValidToolName(at(96))).toBe(true);
    expect(isValidToolName(at(97))).toBe(false);
  });

  it('toolDomain is the first segment', () => {
    expect(toolDomain('mcp.acme.create_ticket')).toBe('mcp');
    expect(toolDomain('workspace.read_text')).toBe('workspace');
  });
});

describe('normalizeRemoteToolName (§ The registry, steps 1–5)', () => {
  it('"Get Item" and "get-item" collide on get_item (the spec\'s own example)', () => {
    expect(normalizeRemoteToolName('Get Item')).toBe('get_item');
    expect(normalizeRemoteToolName('get-item')).toBe('get_item');
  });

  it.each([
    ['already normal', 'create_ticket', 'create_ticket'],
    ['lowercased', 'CreateTicket', 'createticket'],
    ['dots and slashes', 'files/read.text', 'files_read_text'],
    ['runs collapsed', 'a  --  b___c', 'a_b_c'],
    ['edges stripped', '__-hello-__', 'hello'],
    ['empty', '', 't_'],
    ['only punctuation', '---', 't_'],
    ['leading digit', '1abc', 't_1abc'],
    ['leading digit after a stripped edge', '-1abc', 't_1abc'],
    ['non-ASCII letters become _', 'café au lait', 'caf_au_lait'],
    ['an emoji becomes a separator', 'rocket🚀launch', 'rocket_launch'],
    ['astral letters', '𝐀𝐁c', 'c'],
    ['a lone surrogate', 'a\uD800b', 'a_b'],
  ])('%s: %j -> %j', (_label, remote, expected) => {
    expect(normalizeRemoteToolName(remote)).toBe(expected);
  });

  it('normalizes NFC before lowercasing and mapping', () => {
    // NFD "E" + combining acute is one letter after NFC, so it becomes one _ and is stripped;
    // without NFC the bare "e" would survive as a letter.
    expect(normalizeRemoteToolName('E\u0301tat')).toBe('tat');
    expect(normalizeRemoteToolName('E\u0301tat')).toBe(normalizeRemoteToolName('État'));
    expect(normalizeRemoteToolName('re\u0301sume\u0301')).toBe(normalizeRemoteToolName('résumé'));
    // KELVIN SIGN is NFC-equivalent to K, which lowercases to k.
    expect(normalizeRemoteToolName('\u212Aey')).toBe('key');
  });

  it('keeps a name of exactly 48 characters', () => {
    const name = 'a'.repeat(48);
    expect(normalizeRemoteToolName(name)).toBe(name);
  });

  it('truncates 49 characters to 40 + _ + 7 hex of sha256(original remote)', () => {
    const remote = 'b'.repeat(49);
    const normalized = normalizeRemoteToolName(remote);
    expect(normalized).toBe(`${'b'.repeat(40)}_${sha7(remote)}`);
    expect(normalized).toHaveLength(48);
  });

  it('hashes the remote name as reported, not the normalized one', () => {
    // Two remotes that normalize to the same long string still differ by their hash suffix.
    const a = `Fetch ${'x'.repeat(60)}`;
    const b = `fetch-${'x'.repeat(60)}`;
    expect(normalizeRemoteToolName(a)).toBe(`fetch_${'x'.repeat(34)}_${sha7(a)}`);
    expect(normalizeRemoteToolName(b)).toBe(`fetch_${'x'.repeat(34)}_${sha7(b)}`);
    expect(normalizeRemoteToolName(a)).not.toBe(normalizeRemoteToolName(b));
    expect(sha7(a)).not.toBe(sha7(`fetch_${'x'.repeat(60)}`));
  });

  it('measures length after normalization: a long remote that shrinks under 48 is not hashed', () => {
    const remote = `a${'-'.repeat(100)}b`;
    expect(normalizeRemoteToolName(remote)).toBe('a_b');
  });

  it('applies the digit prefix before the length check (47 digits + prefix = 49)', () => {
    const remote = '1'.repeat(47);
    expect(normalizeRemoteToolName(remote)).toBe(`t_${'1'.repeat(38)}_${sha7(remote)}`);
  });

  it('is deterministic: the same input always gives the same name', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 80 }), (remote) => {
        expect(normalizeRemoteToolName(remote)).toBe(normalizeRemoteToolName(remote));
        expect(normalizeRemoteToolName(remote)).toBe(normalizeRemoteToolName(remote.normalize('NFD')));
      }),
    );
  });

  it('always yields a valid registry name under mcp.s. and at most 48 characters', () => {
    const remote = fc.oneof(
      fc.string({ maxLength: 120 }),
      fc.string({ unit: 'binary', maxLength: 120 }),
      fc.string({ unit: 'grapheme', maxLength: 60 }),
      fc.string({ unit: fc.constantFrom('A', 'z', '0', '9', '_', '-', ' ', '.', 'é', 'e\u0301', '\u{1F680}', '\uD800'), maxLength: 120 }),
    );
    fc.assert(
      fc.property(remote, (r) => {
        const normalized = normalizeRemoteToolName(r);
        expect(normalized.length).toBeLessThanOrEqual(48);
        expect(normalized).toMatch(/^[a-z][a-z0-9_]*$/);
        expect(isValidToolName(`mcp.s.${normalized}`)).toBe(true);
      }),
      { numRuns: 500 },
    );
  });
});

describe('mcpToolName', () => {
  it('prefixes mcp.{server_id}.', () => {
    expect(mcpToolName('acme', 'Create Ticket')).toBe('mcp.acme.create_ticket');
    expect(mcpToolName('a1_b', '9lives')).toBe('mcp.a1_b.t_9lives');
  });

  it('stays within 96 characters with the longest server id and name', () => {
    const name = mcpToolName('s'.repeat(SERVER_ID_MAX_LENGTH), 'n'.repeat(200));
    expect(name.length).toBeLessThanOrEqual(TOOL_NAME_MAX_LENGTH);
    expect(isValidToolName(name)).toBe(true);
  });

  it.each([
    ['uppercase', 'Acme'],
    ['hyphen', 'ac-me'],
    ['dot', 'ac.me'],
    ['leading digit', '1acme'],
    ['leading underscore', '_acme'],
    ['empty', ''],
    ['too long', 's'.repeat(SERVER_ID_MAX_LENGTH + 1)],
  ])('rejects a server id with %s by a typed RegistrationError', (_label, serverId) => {
    expect(isValidServerId(serverId)).toBe(false);
    let caught: unknown;
    try {
      mcpToolName(serverId, 'tool');
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(RegistrationError);
    expect(VeetbotError.isInstance(caught)).toBe(true);
    expect((caught as RegistrationError).code).toBe('registry.server_id_invalid');
  });

  it('accepts a server id of exactly the maximum length', () => {
    expect(isValidServerId('s'.repeat(SERVER_ID_MAX_LENGTH))).toBe(true);
  });
});
