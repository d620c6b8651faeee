import type { Clock, Tool } from '@veetbot/ports';
import { defineBuiltinSpec, JSON_SCHEMA_DIALECT } from '../builtin-spec';
import { toolFailure, toolSuccess } from '../tool-result-helpers';
import { canonicalTimeZone, zonedTime } from './zoned-time';

export const DEFAULT_TIME_ZONE = 'UTC';

/** The wall clock, unless a composition root injects another (tests, replay). */
export const SYSTEM_CLOCK: Clock = { now: () => new Date() };

export const systemTimeSpec = defineBuiltinSpec({
  name: 'system.time',
  version: '1.0.0',
  description:
    'The current time: ISO 8601 local time with UTC offset in the requested IANA time zone (default UTC), ' +
    'the UTC time, and milliseconds since the Unix epoch.',
  input_schema: {
    $schema: JSON_SCHEMA_DIALECT,
    type: 'object',
    properties: {
      timezone: {
        type: 'string',
        minLength: 1,
        maxLength: 64,
        // IANA names: letters, digits, "_", "+", "-" and "/" (Europe/Paris, Etc/GMT+5, UTC).
        pattern: '^[A-Za-z][A-Za-z0-9_+/-]*$',
        default: DEFAULT_TIME_ZONE,
        description: 'An IANA time zone name, for example "Europe/Paris".',
      },
    },
    additionalProperties: false,
  },
  output_schema: {
    $schema: JSON_SCHEMA_DIALECT,
    type: 'object',
    properties: {
      iso: { type: 'string' },
      utc: { type: 'string' },
      epoch_ms: { type: 'integer' },
      timezone: { type: 'string' },
      utc_offset: { type: 'string', pattern: '^[+-][0-9]{2}:[0-9]{2}$' },
    },
    required: ['iso', 'utc', 'epoch_ms', 'timezone', 'utc_offset'],
    additionalProperties: false,
  },
  // Reading the clock reaches nothing outside the process.
  side_effect: 'none',
  risk: 'low',
  idempotency: 'read_only',
  required_scopes: [],
  timeout_seconds: 5,
  maximum_output_bytes: 4_096,
  allow_parallel: true,
  output_trust: 'internal_tool',
});

export interface SystemTimeOptions {
  readonly clock?: Clock;
}

export function createSystemTimeTool(options: SystemTimeOptions = {}): Tool {
  const clock = options.clock ?? SYSTEM_CLOCK;
  return {
    spec: systemTimeSpec,
    async execute(args) {
      const requested = args.timezone ?? DEFAULT_TIME_ZONE;
      const zone = typeof requested === 'string' ? canonicalTimeZone(requested) : undefined;
      if (zone === undefined) {
        return toolFailure('invalid_arguments', 'timezone', `Not a time zone this runtime knows: ${JSON.stringify(requested)}`);
      }
      const now = clock.now();
      const local = zonedTime(now, zone);
      return toolSuccess(`${local.iso} (${zone})`, {
        iso: local.iso,
        utc: now.toISOString(),
        epoch_ms: now.getTime(),
        timezone: zone,
        utc_offset: local.utcOffset,
      });
    },
  };
}
