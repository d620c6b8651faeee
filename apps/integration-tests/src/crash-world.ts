import { workspaceService } from './workspace-service';
import path from 'node:path';
import type { PipelineHooks } from '@veetbot/executor';
import type { Clock, Reconcilers, Stores, ToolMetrics } from '@veetbot/ports';
import { AjvSchemaValidator } from '@veetbot/validation';
import { InMemoryToolRegistry } from '@veetbot/registry';
import { DefaultPolicyEngine } from '@veetbot/policy';
import { createBuiltinTools } from '@veetbot/tools-builtin';
import { createArtifactWriterFactory, FolderBlobStore, FolderWorkspaceProvider } from '@veetbot/blob-store-folder';
import { DefaultCredentialResolver } from '@veetbot/credential-broker';
import { Runtime, type RuntimeSettings } from '@veetbot/runtime';
import { createCrashTools, outboxFile, type EffectHooks } from './crash-tools';

/**
 * The durable pipeline as a worker process composes it (apps/worker/src/compose.ts), minus the
 * queue and MCP: the ajv validator, the registry with the builtins and the crash tools, the
 * default policy engine, the stores it is given, the folder blob store and workspaces, the
 * credential broker, and a Runtime owning `owner`. The crash child and the recovering side of
 * the test compose the same world, so both pin, resolve and key a call identically.
 */

/** The folders every process of one crash suite shares: the outboxes are the external world. */
export interface CrashFolders {
  /** Holds one outbox file per tool (`outboxFile`), demo.external_write's included. */
  readonly outbox: string;
  readonly blobs: string;
  readonly workspaces: string;
}

export function crashFolders(root: string): CrashFolders {
  return { outbox: path.join(root, 'outbox'), blobs: path.join(root, 'blobs'), workspaces: path.join(root, 'workspaces') };
}

/** The wall clock: child processes and the test agree on time, as two workers on one database do. */
export const WALL_CLOCK: Clock = { now: () => new Date() };

/** The wall clock seen `offsetMs` later: a recovering worker that arrives after a lease has expired, without sleeping. */
export function laterClock(offsetMs: number): Clock {
  return { now: () => new Date(Date.now() + offsetMs) };
}

export interface CrashWorldOptions {
  readonly stores: Stores;
  readonly owner: string;
  readonly folders: CrashFolders;
  readonly clock?: Clock;
  readonly hooks?: PipelineHooks;
  /** demo.external_write's and the crash tools' effect-boundary hooks. */
  readonly effects?: EffectHooks;
  readonly settings?: Partial<RuntimeSettings>;
  /** docs/adr/0063: when given, the sweep settles UNCERTAIN rows it can through these. */
  readonly reconcilers?: Reconcilers;
  readonly metrics?: ToolMetrics;
  /**
   * Tools already registered (crashRegistry): several Runtimes of one process share them, as
   * they would share one registry. Its tools' effect hooks are the ones that apply.
   */
  readonly registry?: CrashRegistry;
}

export interface CrashRegistry {
  readonly registry: InMemoryToolRegistry;
  readonly validator: AjvSchemaValidator;
}

export interface CrashWorld extends CrashRegistry {
  readonly runtime: Runtime;
}

/** The validator and a registry holding the builtins (demo.external_write's outbox in `folders`) and the crash tools. */
export function crashRegistry(folders: CrashFolders, clock: Clock = WALL_CLOCK, effects: EffectHooks = {}): CrashRegistry {
  const validator = new AjvSchemaValidator();
  const registry = new InMemoryToolRegistry({ validator, globalMaximumOutputBytes: 1024 * 1024, flags: {} });
  registry.registerBuiltins([
    ...createBuiltinTools({
      outboxPath: outboxFile(folders.outbox, 'demo.external_write'),
      clock,
      ...(effects.beforeEffect === undefined ? {} : { beforeEffect: effects.beforeEffect }),
      ...(effects.afterEffect === undefined ? {} : { afterEffect: effects.afterEffect }),
    }),
    ...createCrashTools(folders.outbox, effects),
  ]);
  return { registry, validator };
}

export function composeCrashWorld(options: CrashWorldOptions): CrashWorld {
  const clock = options.clock ?? WALL_CLOCK;
  const { registry, validator } = options.registry ?? crashRegistry(options.folders, clock, options.effects);
  const runtime = new Runtime({
    registry,
    validator,
    policy: new DefaultPolicyEngine(),
    clock,
    stores: options.stores,
    artifacts: createArtifactWriterFactory({
      blobs: new FolderBlobStore({ root: options.folders.blobs }),
      artifacts: options.stores.artifacts,
      clock,
    }),
    credentials: new DefaultCredentialResolver({ env: {} }),
    owner: options.owner,
    workspaces: new FolderWorkspaceProvider({
      root: options.folders.workspaces,
      open: (folder) => workspaceService(options.folders.workspaces).handle(folder),
    }),
    ...(options.hooks === undefined ? {} : { hooks: options.hooks }),
    ...(options.settings === undefined ? {} : { settings: options.settings }),
    ...(options.reconcilers === undefined ? {} : { reconcilers: options.reconcilers }),
    ...(options.metrics === undefined ? {} : { metrics: options.metrics }),
  });
  return { runtime, registry, validator };
}
