import type { Transport } from '@modelcontextprotocol/client';

const MODERN = '2026-07-28';

/**
 * SEP-2322 (docs/adr/0060): "a client MUST assume resultType `complete` when not specified". The
 * 2.4 SDK's 2026-07-28 codec refuses such a result instead (it keeps the absent-means-complete
 * bridge for 2025 servers only), so a server that omits the field would see its finished call
 * reported as unreachable. This wraps the transport's delivery, after the client attached it:
 * a JSON-RPC result object without `resultType`, on a connection that negotiated 2026-07-28,
 * gets `resultType: 'complete'` and is then decoded and validated by the SDK as any other.
 * Nothing else is touched: requests, notifications, errors and results that name a type pass
 * as they came.
 */
export function assumeCompleteResults(transport: Transport, negotiated: () => string | undefined): void {
  const deliver = transport.onmessage;
  if (deliver === undefined) return;
  transport.onmessage = (message, extra) => {
    const result = (message as { result?: unknown }).result;
    if (
      'id' in message &&
      typeof result === 'object' &&
      result !== null &&
      !Array.isArray(result) &&
      !Object.hasOwn(result, 'resultType') &&
      negotiated() === MODERN
    ) {
      deliver({ ...message, result: { ...result, resultType: 'complete' } } as typeof message, extra);
      return;
    }
    deliver(message, extra);
  };
}
