import { DefaultPolicyEngine } from '@veetbot/policy';
import { InMemoryToolRegistry } from '@veetbot/registry';
import { createBuiltinTools } from '@veetbot/tools-builtin';
import { AjvSchemaValidator } from '@veetbot/validation';
import type { PipelineDeps } from '@veetbot/executor';
import type { Principal } from '@veetbot/domain';
import type { AgentSpec, PinnedToolSet, RuntimeEnvironment } from '@veetbot/ports';

/** The global output ceiling (§ Output): a spec declaring more is a registration error. */
export const GLOBAL_MAXIMUM_OUTPUT_BYTES = 1024 * 1024;

export interface CliComposition {
  readonly deps: PipelineDeps;
  readonly registry: InMemoryToolRegistry;
  readonly principal: Principal;
  readonly agent: AgentSpec;
  readonly pinned: PinnedToolSet;
}

/**
 * The CLI's composition root: builtins registered (a registration error here is a startup
 * error), the default policy profile, and one pinned set for the local operator.
 */
export function composeCli(options: { outboxPath: string; flags?: Record<string, boolean> }): CliComposition {
  const validator = new AjvSchemaValidator();
  const registry = new InMemoryToolRegistry({
    validator,
    globalMaximumOutputBytes: GLOBAL_MAXIMUM_OUTPUT_BYTES,
    flags: options.flags ?? {},
  });
  registry.registerBuiltins(createBuiltinTools({ outboxPath: options.outboxPath }));
  const policy = new DefaultPolicyEngine();
  const agent: AgentSpec = { agentId: 'cli' };
  const environment: RuntimeEnvironment = { flags: options.flags ?? {}, targetKinds: ['in_process'] };
  // The local operator holds every scope a registered builtin asks for.
  const scopes = [...new Set(registry.list().flatMap((s) => s.required_scopes))].sort();
  const principal: Principal = { tenant_id: 'local', principal_id: 'operator', scopes };
  const pinned = registry.specsForSession(agent, principal, policy, environment);
  return { deps: { registry, validator, policy, clock: { now: () => new Date() } }, registry, principal, agent, pinned };
}
