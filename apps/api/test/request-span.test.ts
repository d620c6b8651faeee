import { describe, expect, it } from 'vitest';
import { incomingLink } from '../src/request-span';

/** docs/adr/0068: a caller's traceparent is only ever a link, and only when it is valid W3C. */
describe('incomingLink', () => {
  it('links a valid traceparent, with its sampled flag only', () => {
    expect(incomingLink('00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-03')).toEqual({
      context: { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', traceFlags: 1, isRemote: true },
      attributes: { 'veetbot.link': 'caller_traceparent' },
    });
  });

  it('ignores anything else', () => {
    for (const header of [
      undefined,
      '',
      'garbage',
      '00-0AF7651916CD43DD8448EB211C80319C-B7AD6B7169203331-01',
      '00-00000000000000000000000000000000-b7ad6b7169203331-01',
      '00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01',
      '01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
      `00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01${'x'.repeat(10_000)}`,
      '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-0g',
    ])
      expect(incomingLink(header), String(header).slice(0, 80)).toBeNull();
  });
});
