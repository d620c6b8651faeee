import { metrics, SpanStatusCode, trace } from '@opentelemetry/api';

const tracer = trace.getTracer('@veetbot/mcp-adapter');
const meter = metrics.getMeter('@veetbot/mcp-adapter');

/** § Spans and metrics: labelled by server, method and outcome; never by tenant. */
const requestsTotal = meter.createCounter('mcp_requests_total', { description: 'MCP JSON-RPC round trips.' });
const connectFailuresTotal = meter.createCounter('mcp_connect_failures_total', { description: 'MCP connections that failed to establish, by reason code.' });

/**
 * § Spans and metrics: one `mcp.request` span per JSON-RPC round trip (under tool.execute when a
 * call makes it). Attributes name the server and method; never arguments, never results.
 */
export async function traceRequest<T>(serverId: string, method: string, work: () => Promise<T>): Promise<T> {
  return tracer.startActiveSpan('mcp.request', { attributes: { 'mcp.server': serverId, 'mcp.method': method } }, async (span) => {
    try {
      const value = await work();
      span.setAttribute('mcp.outcome', 'ok');
      requestsTotal.add(1, { server: serverId, method, outcome: 'ok' });
      return value;
    } catch (error) {
      span.setAttribute('mcp.outcome', 'error');
      span.setStatus({ code: SpanStatusCode.ERROR });
      requestsTotal.add(1, { server: serverId, method, outcome: 'error' });
      throw error;
    } finally {
      span.end();
    }
  });
}

export function countConnectFailure(serverId: string, reasonCode: string): void {
  connectFailuresTotal.add(1, { server: serverId, reason_code: reasonCode });
}
