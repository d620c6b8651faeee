import {
  composeSystem as composeShared,
  type ComposedSystem as SharedSystem,
  type ComposeOptions as SharedOptions,
} from '@veetbot/composition';
import { ApiKeyCache } from './api-key-cache';
import type { ApiDeps, ApiSettings } from './deps';

export { GLOBAL_MAXIMUM_OUTPUT_BYTES } from '@veetbot/composition';

/** The api's dependencies over the one composed system (@veetbot/composition, ADR 0022). */
export function apiDeps(
  system: SharedSystem,
  options: { apiSettings?: Partial<ApiSettings>; logError?: ApiDeps['logError'] } = {},
): ApiDeps {
  return {
    stores: system.stores,
    // One per process (every app built from these deps shares it), over the process's one
    // listening connection (docs/adr/0075).
    apiKeyCache: new ApiKeyCache(system.stores.apiKeys, system.queue.apiKeyChanges),
    apiStores: system.apiStores,
    runtime: system.runtime,
    queue: system.queue,
    events: system.queue.events,
    blobs: system.blobs,
    clock: system.clock,
    environment: { flags: system.environment.flags, targetKinds: [...system.environment.targetKinds] },
    egress: system.tenantEgress,
    operatorServers: system.operator.servers,
    secretKeyring: system.secretKeys.keyring,
    ...(system.mcp === undefined ? {} : { mcp: system.mcp }),
    readiness: () => system.readiness(),
    metrics: system.metrics,
    metricsToken: system.metricsToken,
    ...(options.apiSettings === undefined ? {} : { settings: options.apiSettings }),
    ...(options.logError === undefined ? {} : { logError: options.logError }),
    shutdownSignal: system.shutdownSignal,
  };
}

export interface ComposeOptions extends SharedOptions {
  readonly apiSettings?: Partial<ApiSettings>;
  readonly logError?: ApiDeps['logError'];
}

export interface ComposedSystem extends SharedSystem {
  readonly deps: ApiDeps;
}

/** The shared composition plus the api's deps over it (the api's tests compose this way). */
export async function composeSystem(options: ComposeOptions): Promise<ComposedSystem> {
  const system = await composeShared(options);
  return Object.assign(system, { deps: apiDeps(system, options) });
}
