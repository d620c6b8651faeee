import type { ToolKind, ToolSource } from './enums';

/**
 * § The registry: domains are partitioned. One row per domain: which sources may register
 * in it, and which kinds. The reserved-domain list is a constant here and the registry
 * reads it; a builtin in `mcp` or `device` is a startup error (Hard gate 10).
 */
export interface DomainPartition {
  readonly domain: string;
  readonly sources: readonly ToolSource[];
  readonly kinds: readonly ToolKind[];
  /** Builtins here register only when a deployment flag is on (the flag's name). */
  readonly flag?: string;
}

const builtin = (domain: string, kinds: readonly ToolKind[] = ['capability'], flag?: string): DomainPartition =>
  flag === undefined ? { domain, sources: ['builtin'], kinds } : { domain, sources: ['builtin'], kinds, flag };

export const DOMAIN_PARTITIONS: readonly DomainPartition[] = [
  builtin('system'),
  builtin('math'),
  builtin('workspace'),
  { domain: 'sandbox', sources: ['builtin', 'sandbox'], kinds: ['capability'] },
  builtin('artifact'),
  builtin('demo'),
  builtin('delegate', ['control']),
  builtin('conversation', ['control']),
  builtin('context', ['control']),
  builtin('tool', ['control']),
  builtin('skill', ['control', 'capability']),
  builtin('memory'),
  builtin('schedule'),
  builtin('knowledge'),
  builtin('web'),
  builtin('browser'),
  builtin('email', ['capability'], 'AGENT_EMAIL_MODE_ENABLED|AGENT_EMAIL_UNSUBSCRIBE_ENABLED'),
  builtin('people', ['capability'], 'people'),
  builtin('image'),
  builtin('video'),
  { domain: 'mcp', sources: ['mcp'], kinds: ['capability'] },
  { domain: 'device', sources: ['device'], kinds: ['capability'] },
];

/** Domains reserved for dynamic sources: never a builtin. */
export const RESERVED_DOMAINS: ReadonlySet<string> = new Set(['mcp', 'device']);

const BY_DOMAIN = new Map(DOMAIN_PARTITIONS.map((p) => [p.domain, p]));

export function domainPartition(domain: string): DomainPartition | undefined {
  return BY_DOMAIN.get(domain);
}

/**
 * § Control tools: the set is closed at build time and has exactly five members
 * (Decision 25).
 */
export const CONTROL_TOOL_NAMES: ReadonlySet<string> = new Set([
  'conversation.ask_user',
  'delegate.run',
  'context.update_working_state',
  'skill.load',
  'tool.call',
]);

/** § Target rules: network-enabled builtin target kinds. */
export const TARGET_KINDS = ['in_process', 'sandbox', 'mcp', 'device', 'web_provider', 'browser_provider', 'unsubscribe_endpoint'] as const;
