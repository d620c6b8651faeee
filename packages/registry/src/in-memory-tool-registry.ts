import {
  canonicalJson,
  ConfigurationError,
  RegistrationError,
  ToolNotFoundError,
  ToolSource,
  type Principal,
  type ToolSpec,
} from '@veetbot/domain';
import type {
  AgentSpec,
  DynamicTool,
  PinnedToolSet,
  PolicyEngine,
  RegistrationRejection,
  RegistrationReport,
  RuntimeEnvironment,
  SchemaValidator,
  Tool,
  ToolRegistry,
} from '@veetbot/ports';
import { checkRegistration, type RuleContext } from './registration-rules';
import { failure, type RuleFailure } from './registration-codes';
import { pinSpecs, selectSpecs } from './specs-for-session';
import { deepFreeze } from './deep-freeze';

export interface ToolRegistryOptions {
  /** Admits every input and output schema (the registry never imports ajv itself). */
  readonly validator: SchemaValidator;
  /** § Output: limits: the configured global ceiling on maximum_output_bytes. */
  readonly globalMaximumOutputBytes: number;
  /** Deployment flags gating flagged domains at registration (AGENT_EMAIL_MODE_ENABLED, ...). */
  readonly flags?: Readonly<Record<string, boolean>>;
}

/** registerBuiltins' result: every builtin registered, and those whose gate is off. */
export interface BuiltinRegistrationReport {
  readonly registered: readonly string[];
  /** Only `registry.flag_disabled`: every other broken rule throws. */
  readonly skipped: readonly RegistrationRejection[];
}

interface Candidate {
  readonly spec: ToolSpec;
  readonly limits?: Tool['limits'];
  /** Builtins only (docs/adr/0039): a dynamic registration can never ask step 10 for the runtime. */
  readonly hostedBy?: Tool['hostedBy'];
  readonly execute: Tool['execute'];
}

/** A route limit the executor folds into the effective timeout: absent, or positive and finite. */
function validLimits(limits: Tool['limits']): boolean {
  if (limits === undefined) return true;
  const seconds = limits.requestTimeoutSeconds;
  return seconds === undefined || (typeof seconds === 'number' && Number.isFinite(seconds) && seconds > 0);
}

/** Bounds a declared name before it goes into a report or error: it may come from outside. */
function displayName(declaration: unknown): string {
  const name = typeof declaration === 'object' && declaration !== null ? (declaration as Record<string, unknown>).name : undefined;
  if (typeof name !== 'string') return '(unnamed)';
  return name.length > 128 ? `${name.slice(0, 128)}…` : name;
}

/**
 * § Resolution: the registry. Versions co-exist (an MCP catalog change registers a new
 * version; sessions pinned to the old one keep resolving it); the latest version of a name is
 * the one registered most recently. Every pinned set stays addressable by its hash.
 */
export class InMemoryToolRegistry implements ToolRegistry {
  /** name -> version -> tool; each inner Map in registration order, latest last. */
  readonly #tools = new Map<string, Map<string, Tool>>();
  readonly #pinned = new Map<string, PinnedToolSet>();
  readonly #context: RuleContext;

  constructor(options: ToolRegistryOptions) {
    if (!Number.isInteger(options.globalMaximumOutputBytes) || options.globalMaximumOutputBytes <= 0) {
      throw new ConfigurationError('config.output_ceiling_invalid', 'globalMaximumOutputBytes must be a positive integer.');
    }
    this.#context = {
      validator: options.validator,
      globalMaximumOutputBytes: options.globalMaximumOutputBytes,
      flags: { ...(options.flags ?? {}) },
    };
  }

  /** Build time. Throws RegistrationError (the startup error) for any broken rule. */
  registerBuiltin(tool: Tool): void {
    const verdict = this.#checkBuiltin(tool, []);
    if (!verdict.ok) throw new RegistrationError(verdict.code, displayName(tool.spec), verdict.reason);
    this.#commit(verdict.candidate);
  }

  /**
   * Build time, all or nothing: every builtin is checked before any is registered, and the
   * first broken rule throws. A builtin whose deployment flag is off is skipped and reported
   * (a deployment choice, not a defect), after passing every other rule.
   */
  registerBuiltins(tools: readonly Tool[]): BuiltinRegistrationReport {
    const accepted: Candidate[] = [];
    const skipped: RegistrationRejection[] = [];
    for (const tool of tools) {
      const verdict = this.#checkBuiltin(tool, accepted);
      if (verdict.ok) accepted.push(verdict.candidate);
      else if (verdict.code === 'registry.flag_disabled')
        skipped.push({ name: displayName(tool.spec), code: verdict.code, reason: verdict.reason });
      else throw new RegistrationError(verdict.code, displayName(tool.spec), verdict.reason);
    }
    for (const candidate of accepted) this.#commit(candidate);
    return { registered: accepted.map((c) => c.spec.name), skipped };
  }

  /**
   * § Skills: the registry accepts new entries from the build, MCP and devices (and the
   * sandbox), never a builtin at runtime. Per-tool failures never throw: the report lists
   * every registered name and every rejection with its code and reason. A `builtin` source
   * rejects every tool with registry.source_builtin.
   */
  async registerDynamic(tools: readonly DynamicTool[], source: ToolSource): Promise<RegistrationReport> {
    const rejected: RegistrationRejection[] = [];
    const registered: string[] = [];
    const parsedSource = ToolSource.safeParse(source);
    if (!parsedSource.success || parsedSource.data === 'builtin') {
      const code = parsedSource.success ? 'registry.source_builtin' : 'registry.source_invalid';
      const f = failure(code);
      return { source, registered, rejected: tools.map((t) => ({ name: displayName(t.spec), ...f })) };
    }

    // § The registry: two declarations under one name in one catalog are a conflict, and
    // neither is registered, so the outcome cannot depend on iteration order.
    const counts = new Map<string, number>();
    for (const tool of tools) {
      const name = displayName(tool.spec);
      counts.set(name, (counts.get(name) ?? 0) + 1);
    }

    for (const tool of tools) {
      const name = displayName(tool.spec);
      if ((counts.get(name) ?? 0) > 1) {
        rejected.push({ name, ...failure('registry.batch_conflict') });
        continue;
      }
      const verdict = checkRegistration(tool.spec, parsedSource.data, this.#context);
      if (!verdict.ok) {
        rejected.push({ name, code: verdict.code, reason: verdict.reason });
        continue;
      }
      if (!validLimits(tool.limits)) {
        rejected.push({ name, ...failure('registry.limits_invalid') });
        continue;
      }
      const conflict = this.#stateConflict(verdict.spec, [], true);
      if (conflict !== undefined) {
        rejected.push({ name, ...conflict });
        continue;
      }
      this.#commit({
        spec: verdict.spec,
        ...(tool.limits === undefined ? {} : { limits: tool.limits }),
        execute: (args, context) => tool.execute(args, context),
      });
      registered.push(verdict.spec.name);
    }
    return { source, registered, rejected };
  }

  /** Throws ToolNotFoundError. Without a version, the most recently registered one. */
  get(name: string, version?: string): Tool {
    const versions = this.#tools.get(name);
    const tool = versions === undefined ? undefined : version === undefined ? [...versions.values()].at(-1) : versions.get(version);
    if (tool === undefined) throw new ToolNotFoundError(name);
    return tool;
  }

  /** The latest version of every registered tool, sorted by name. */
  list(): ToolSpec[] {
    return [...this.#tools.values()]
      .map((versions) => [...versions.values()].at(-1)!.spec)
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** Every registered version of a name, oldest first. */
  versions(name: string): readonly string[] {
    return [...(this.#tools.get(name)?.keys() ?? [])];
  }

  specsForSession(agent: AgentSpec, principal: Principal, profile: PolicyEngine, environment: RuntimeEnvironment): PinnedToolSet {
    const latest = [...this.#tools.values()].map((versions) => [...versions.values()].at(-1)!.spec);
    const pinned = pinSpecs(selectSpecs(latest, agent, principal, profile, environment));
    const existing = this.#pinned.get(pinned.toolSchemaSha256);
    if (existing !== undefined) return existing;
    this.#pinned.set(pinned.toolSchemaSha256, pinned);
    return pinned;
  }

  pinned(toolSchemaSha256: string): PinnedToolSet | undefined {
    return this.#pinned.get(toolSchemaSha256);
  }

  #checkBuiltin(tool: Tool, pending: readonly Candidate[]): { ok: true; candidate: Candidate } | ({ ok: false } & RuleFailure) {
    const verdict = checkRegistration(tool.spec, 'builtin', this.#context);
    if (!verdict.ok) return verdict;
    if (!validLimits(tool.limits)) return { ok: false, ...failure('registry.limits_invalid') };
    const conflict = this.#stateConflict(verdict.spec, pending, false);
    if (conflict !== undefined) return { ok: false, ...conflict };
    return {
      ok: true,
      candidate: {
        spec: verdict.spec,
        ...(tool.limits === undefined ? {} : { limits: tool.limits }),
        ...(tool.hostedBy === undefined ? {} : { hostedBy: tool.hostedBy }),
        execute: (args, context) => tool.execute(args, context),
      },
    };
  }

  /**
   * The rules that depend on what is already registered. A name belongs to one source (a
   * sandbox tool cannot shadow a builtin in the shared sandbox domain). A name and version
   * register once; a dynamic re-registration of an identical spec (a server rediscovered
   * with the same catalog) is accepted and refreshes the route.
   */
  #stateConflict(spec: ToolSpec, pending: readonly Candidate[], allowIdentical: boolean): RuleFailure | undefined {
    const existing = [...(this.#tools.get(spec.name)?.values() ?? []), ...pending.filter((c) => c.spec.name === spec.name)].map(
      (t) => t.spec,
    );
    if (existing.some((other) => other.source !== spec.source)) return failure('registry.source_conflict');
    const same = existing.find((other) => other.version === spec.version);
    if (same === undefined) return undefined;
    if (allowIdentical && canonicalJson(same) === canonicalJson(spec)) return undefined;
    return failure('registry.duplicate');
  }

  #commit(candidate: Candidate): void {
    const spec = deepFreeze(structuredClone(candidate.spec));
    // The route's limits travel with the route: an identical re-registration (a server
    // rediscovered after its request timeout was reconfigured) refreshes them too.
    const limits = candidate.limits === undefined ? undefined : Object.freeze({ ...candidate.limits });
    const hostedBy = candidate.hostedBy === undefined ? {} : { hostedBy: candidate.hostedBy };
    const tool: Tool = Object.freeze({ spec, ...(limits === undefined ? {} : { limits }), ...hostedBy, execute: candidate.execute });
    let versions = this.#tools.get(spec.name);
    if (versions === undefined) {
      versions = new Map();
      this.#tools.set(spec.name, versions);
    }
    // Re-registration moves the version to the end: it is now the most recent.
    versions.delete(spec.version);
    versions.set(spec.version, tool);
  }
}
