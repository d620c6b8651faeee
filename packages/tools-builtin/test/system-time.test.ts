import { ToolResult } from '@veetbot/domain';
import { describe, expect, it } from 'vitest';
import { createSystemTimeTool } from '../src/system/system-time';
import { zonedTime } from '../src/system/zoned-time';
import { createFakeContext } from './fake-context';

const instant = new Date('2025-07-01T12:34:56.789Z');
const tool = createSystemTimeTool({ clock: { now: () => instant } });
const run = async (args: Record<string, unknown>) => ToolResult.parse(await tool.execute(args, createFakeContext().context));

describe('system.time', () => {
  it('defaults to UTC and reads the injected clock', async () => {
    const result = await run({});
    expect(result.ok).toBe(true);
    expect(result.structured).toEqual({
      iso: '2025-07-01T12:34:56.789+00:00',
      utc: '2025-07-01T12:34:56.789Z',
      epoch_ms: instant.getTime(),
      timezone: 'UTC',
      utc_offset: '+00:00',
    });
  });

  it.each([
    ['Europe/Paris', '2025-07-01T14:34:56.789+02:00', '+02:00'],
    ['America/New_York', '2025-07-01T08:34:56.789-04:00', '-04:00'],
    ['Asia/Kolkata', '2025-07-01T18:04:56.789+05:30', '+05:30'],
    ['America/St_Johns', '2025-07-01T10:04:56.789-02:30', '-02:30'],
  ])('renders local time in %s', async (timezone, iso, offset) => {
    const result = await run({ timezone });
    expect(result.structured).toMatchObject({ iso, utc_offset: offset, timezone, epoch_ms: instant.getTime() });
    expect(result.content[0]).toEqual({ type: 'text', text: `${iso} (${timezone})` });
  });

  it('handles the winter side of a daylight-saving zone', () => {
    expect(zonedTime(new Date('2025-01-15T00:00:00.000Z'), 'Europe/Paris').iso).toBe('2025-01-15T01:00:00.000+01:00');
    // The instant of a spring-forward jump: 01:00 UTC on 2025-03-30 is 03:00 in Paris.
    expect(zonedTime(new Date('2025-03-30T01:00:00.000Z'), 'Europe/Paris').iso).toBe('2025-03-30T03:00:00.000+02:00');
  });

  it('round-trips: the local ISO string parses back to the same instant', () => {
    for (const zone of ['UTC', 'Pacific/Chatham', 'Asia/Kathmandu', 'America/Caracas', 'Australia/Lord_Howe']) {
      const { iso } = zonedTime(instant, zone);
      expect(new Date(iso).getTime()).toBe(instant.getTime());
    }
  });

  it('fixes the letter case of a zone but keeps current names ICU would alias', async () => {
    expect((await run({ timezone: 'europe/paris' })).structured).toMatchObject({ timezone: 'Europe/Paris', utc_offset: '+02:00' });
    expect((await run({ timezone: 'utc' })).structured).toMatchObject({ timezone: 'UTC' });
  });

  it.each(['Mars/Olympus_Mons', 'Not_A_Zone', 'Europe/Atlantis'])('refuses the unknown zone %s', async (timezone) => {
    const result = await run({ timezone });
    expect(result.ok).toBe(false);
    expect(result.failure).toMatchObject({ kind: 'invalid_arguments', reason_code: 'tool.invalid_arguments.timezone', retryable: false });
    expect(result.content).toEqual([]);
  });

  it('uses the wall clock when none is injected', async () => {
    const before = Date.now();
    const result = ToolResult.parse(await createSystemTimeTool().execute({}, createFakeContext().context));
    const epoch = (result.structured as { epoch_ms: number }).epoch_ms;
    expect(epoch).toBeGreaterThanOrEqual(before);
    expect(epoch).toBeLessThanOrEqual(Date.now());
  });
});
