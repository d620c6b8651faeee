/**
 * Wall-clock time in an IANA zone using only Intl (no tz database of our own): the zone's
 * local fields are read with formatToParts and the UTC offset is their difference from the
 * instant.
 */

export interface ZonedTime {
  /** ISO 8601 local time with the zone's offset, millisecond precision: 2025-03-30T03:30:00.000+02:00 */
  readonly iso: string;
  /** ±HH:MM */
  readonly utcOffset: string;
}

/**
 * The name to report for a zone Intl accepts, or undefined for one it rejects. ICU resolves
 * some current names to legacy links (Asia/Kolkata -> Asia/Calcutta), so its answer is used
 * only to fix letter case; otherwise the caller's own spelling stands.
 */
export function canonicalTimeZone(zone: string): string | undefined {
  try {
    const resolved = new Intl.DateTimeFormat('en-US', { timeZone: zone }).resolvedOptions().timeZone;
    return resolved.toLowerCase() === zone.toLowerCase() ? resolved : zone;
  } catch (error) {
    if (error instanceof RangeError) return undefined;
    throw error;
  }
}

const pad = (value: number, width: number): string => String(Math.abs(value)).padStart(width, '0');

export function zonedTime(instant: Date, zone: string): ZonedTime {
  const format = new Intl.DateTimeFormat('en-US', {
    timeZone: zone,
    hourCycle: 'h23',
    era: 'short',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  });
  const fields = new Map(format.formatToParts(instant).map((part) => [part.type, part.value]));
  const field = (name: Intl.DateTimeFormatPartTypes): number => Number(fields.get(name));
  // "BC" years count backwards from 1; ISO 8601 year 0 is 1 BC.
  const year = fields.get('era') === 'BC' ? 1 - field('year') : field('year');
  const millisecond = ((instant.getTime() % 1000) + 1000) % 1000;
  const wholeSecond = instant.getTime() - millisecond;
  const localAsUtc = Date.UTC(year, field('month') - 1, field('day'), field('hour'), field('minute'), field('second'));
  // Date.UTC maps years 0–99 to 1900–1999; setUTCFullYear undoes that.
  const corrected = new Date(localAsUtc);
  corrected.setUTCFullYear(year);
  const offsetMinutes = Math.round((corrected.getTime() - wholeSecond) / 60_000);
  const sign = offsetMinutes < 0 ? '-' : '+';
  const utcOffset = `${sign}${pad(Math.trunc(offsetMinutes / 60), 2)}:${pad(offsetMinutes % 60, 2)}`;
  const yearText = year < 0 ? `-${pad(year, 6)}` : year > 9999 ? `+${pad(year, 6)}` : pad(year, 4);
  const iso =
    `${yearText}-${pad(field('month'), 2)}-${pad(field('day'), 2)}` +
    `T${pad(field('hour'), 2)}:${pad(field('minute'), 2)}:${pad(field('second'), 2)}.${pad(millisecond, 3)}${utcOffset}`;
  return { iso, utcOffset };
}
