import { StartupError } from '@veetbot/composition';
import type { ApiSettings } from './deps';

/**
 * VEETBOT_EVENT_STREAMS_PER_TENANT (docs/adr/0054): open SSE streams one tenant may hold in one
 * api process (default 16). Anything but an integer from 1 to 10 000 is startup.config_invalid.
 */
export function eventSettingsFromEnv(env: Readonly<Record<string, string | undefined>>): Partial<ApiSettings> {
  const raw = env.VEETBOT_EVENT_STREAMS_PER_TENANT?.trim();
  if (raw === undefined || raw === '') return {};
  const value = Number(raw);
  if (!/^\d{1,5}$/.test(raw) || value < 1 || value > 10_000)
    throw new StartupError('startup.config_invalid', `VEETBOT_EVENT_STREAMS_PER_TENANT must be an integer from 1 to 10000 (got "${raw}").`);
  return { eventStreamsPerTenant: value };
}
