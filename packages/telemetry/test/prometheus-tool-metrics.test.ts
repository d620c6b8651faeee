import { describe, expect, it } from 'vitest';
import type { ToolCallObservation } from '@veetbot/ports';
import { NoopToolMetrics } from '../src/noop-tool-metrics';
import { PrometheusToolMetrics } from '../src/index';
import { counterValue, family, histogramSeries, labelNamesOf, parseExposition } from './prometheus-text';

// § Spans and metrics: the table, as the test reads it.
const SPECIFIED: Record<string, { type: 'counter' | 'histogram'; labels: string[] }> = {
  tool_calls_total: { type: 'counter', labels: ['name', 'outcome_status', 'source'] },
  tool_failures_total: { type: 'counter', labels: ['name', 'reason_code', 'source'] },
  tool_duration_seconds: { type: 'histogram', labels: ['name', 'source'] },
  tool_output_bytes: { type: 'histogram', labels: ['name', 'source'] },
  tool_truncations_total: { type: 'counter', labels: ['name', 'source'] },
  tool_uncertain_total: { type: 'counter', labels: ['name', 'source'] },
  mcp_requests_total: { type: 'counter', labels: ['method', 'outcome', 'server'] },
  mcp_connect_failures_total: { type: 'counter', labels: ['reason_code', 'server'] },
  // docs/adr/0063: not one of the specification's eight; the sweep's reconciliation attempts.
  tool_reconciled_total: { type: 'counter', labels: ['name', 'outcome'] },
};

const call = (over: Partial<ToolCallObservation>): ToolCallObservation => ({
  name: 'workspace.read_file',
  source: 'builtin',
  outcomeStatus: 'succeeded',
  reasonCode: 'tool.ok',
  durationSeconds: 0.02,
  outputBytes: 120,
  truncated: false,
  ...over,
});

function recordEveryKind(metrics: PrometheusToolMetrics): void {
  metrics.recordReconciliation({ name: 'demo.external_write', outcome: 'not_applied' });
  metrics.recordReconciliation({ name: 'demo.external_write', outcome: 'not_applied' });
  metrics.recordReconciliation({ name: 'sandbox.run_command', outcome: 'unknown' });
  metrics.recordToolCall(call({}));
  metrics.recordToolCall(call({ durationSeconds: 0.3, outputBytes: 9000, truncated: true }));
  metrics.recordToolCall(
    call({
      name: 'mcp.acme.create_ticket',
      source: 'mcp',
      outcomeStatus: 'failed',
      reasonCode: 'tool.upstream_error',
      durationSeconds: 1.8,
      outputBytes: null,
    }),
  );
  metrics.recordToolCall(
    call({
      name: 'mcp.acme.create_ticket',
      source: 'mcp',
      outcomeStatus: 'uncertain',
      reasonCode: 'tool.outcome_unknown',
      durationSeconds: 30,
      outputBytes: null,
    }),
  );
  metrics.recordToolCall(
    call({
      name: 'mcp.acme.create_ticket',
      source: 'mcp',
      outcomeStatus: 'unavailable',
      reasonCode: 'tool.server_unauthorized',
      durationSeconds: null,
      outputBytes: null,
    }),
  );
  metrics.recordToolCall(
    call({ name: 'demo.write', outcomeStatus: 'denied', reasonCode: 'policy.denied', durationSeconds: null, outputBytes: null }),
  );
  metrics.recordMcpRequest({ server: 'acme', method: 'tools/call', outcome: 'ok' });
  metrics.recordMcpRequest({ server: 'acme', method: 'tools/call', outcome: 'ok' });
  metrics.recordMcpRequest({ server: 'acme', method: 'tools/list', outcome: 'timeout' });
  metrics.recordMcpConnectFailure({ server: 'acme', reasonCode: 'tool.server_unreachable' });
}

describe('PrometheusToolMetrics', () => {
  it('exposes the eight specified families and tool_reconciled_total, each with exactly its labels and no tenant', async () => {
    const metrics = new PrometheusToolMetrics({ operatorServers: ['acme'] });
    recordEveryKind(metrics);
    const text = await metrics.metricsText();
    const families = parseExposition(text);

    expect(families.map((f) => f.name).sort()).toEqual(Object.keys(SPECIFIED).sort());
    for (const [name, spec] of Object.entries(SPECIFIED)) {
      const f = family(families, name);
      expect(f.type, name).toBe(spec.type);
      expect(labelNamesOf(f).length, name).toBeGreaterThan(0);
      for (const labels of labelNamesOf(f)) expect(labels, name).toEqual(spec.labels);
    }
    expect(text).not.toMatch(/tenant/i);
  });

  it('counts calls by outcome, failures by reason code, and uncertain and truncated calls separately', async () => {
    const metrics = new PrometheusToolMetrics({ operatorServers: ['acme'] });
    recordEveryKind(metrics);
    const families = parseExposition(await metrics.metricsText());
    const read = { name: 'workspace.read_file', source: 'builtin' };
    const ticket = { name: 'mcp.acme.create_ticket', source: 'mcp' };

    expect(counterValue(families, 'tool_calls_total', { ...read, outcome_status: 'succeeded' })).toBe(2);
    expect(counterValue(families, 'tool_calls_total', { ...ticket, outcome_status: 'failed' })).toBe(1);
    expect(counterValue(families, 'tool_calls_total', { name: 'demo.write', source: 'builtin', outcome_status: 'denied' })).toBe(1);
    // failed, uncertain and unavailable are failures; a success and a policy denial are not.
    expect(counterValue(families, 'tool_failures_total', { ...ticket, reason_code: 'tool.upstream_error' })).toBe(1);
    expect(counterValue(families, 'tool_failures_total', { ...ticket, reason_code: 'tool.outcome_unknown' })).toBe(1);
    expect(counterValue(families, 'tool_failures_total', { ...ticket, reason_code: 'tool.server_unauthorized' })).toBe(1);
    expect(family(families, 'tool_failures_total').samples).toHaveLength(3);
    expect(counterValue(families, 'tool_uncertain_total', ticket)).toBe(1);
    expect(family(families, 'tool_uncertain_total').samples).toHaveLength(1);
    expect(counterValue(families, 'tool_truncations_total', read)).toBe(1);
    expect(family(families, 'tool_truncations_total').samples).toHaveLength(1);
    expect(counterValue(families, 'mcp_requests_total', { server: 'acme', method: 'tools/call', outcome: 'ok' })).toBe(2);
    expect(counterValue(families, 'mcp_requests_total', { server: 'acme', method: 'tools/list', outcome: 'timeout' })).toBe(1);
    expect(counterValue(families, 'mcp_connect_failures_total', { server: 'acme', reason_code: 'tool.server_unreachable' })).toBe(1);
    expect(counterValue(families, 'tool_reconciled_total', { name: 'demo.external_write', outcome: 'not_applied' })).toBe(2);
    expect(counterValue(families, 'tool_reconciled_total', { name: 'sandbox.run_command', outcome: 'unknown' })).toBe(1);
  });

  it('observes duration and output size only when measured, into buckets that reach slow tools', async () => {
    const metrics = new PrometheusToolMetrics({ operatorServers: ['acme'] });
    recordEveryKind(metrics);
    metrics.recordToolCall(call({ durationSeconds: Number.NaN, outputBytes: -1 }));
    const families = parseExposition(await metrics.metricsText());

    const readDuration = histogramSeries(families, 'tool_duration_seconds', { name: 'workspace.read_file', source: 'builtin' });
    expect(readDuration?.count).toBe(2);
    expect(readDuration?.sum).toBeCloseTo(0.32, 10);
    const ticketDuration = histogramSeries(families, 'tool_duration_seconds', { name: 'mcp.acme.create_ticket', source: 'mcp' });
    // 1.8 s and 30 s; the unavailable call never ran.
    expect(ticketDuration?.count).toBe(2);
    expect(ticketDuration?.buckets.get('10')).toBe(1);
    expect(ticketDuration?.buckets.get('30')).toBe(2);
    expect(ticketDuration?.buckets.get('300')).toBe(2);
    expect(histogramSeries(families, 'tool_duration_seconds', { name: 'demo.write', source: 'builtin' })).toBeUndefined();

    const readBytes = histogramSeries(families, 'tool_output_bytes', { name: 'workspace.read_file', source: 'builtin' });
    expect(readBytes?.count).toBe(2);
    expect(readBytes?.sum).toBe(9120);
    expect(readBytes?.buckets.get('4096')).toBe(1);
    expect(readBytes?.buckets.get('16384')).toBe(2);
    expect(histogramSeries(families, 'tool_output_bytes', { name: 'mcp.acme.create_ticket', source: 'mcp' })).toBeUndefined();
    // The NaN/negative call still counted as a call.
    expect(
      counterValue(families, 'tool_calls_total', { name: 'workspace.read_file', source: 'builtin', outcome_status: 'succeeded' }),
    ).toBe(3);
  });

  it('escapes hostile label values instead of breaking the exposition', async () => {
    const metrics = new PrometheusToolMetrics({ operatorServers: ['a"b\\c\nd'] });
    metrics.recordMcpRequest({ server: 'a"b\\c\nd', method: 'tools/call', outcome: 'rpc_error' });
    const families = parseExposition(await metrics.metricsText());
    expect(counterValue(families, 'mcp_requests_total', { server: 'a"b\\c\nd', method: 'tools/call', outcome: 'rpc_error' })).toBe(1);
  });

  it('keeps one registry per instance and serves the text format content type', async () => {
    const a = new PrometheusToolMetrics({ operatorServers: ['acme'] });
    const b = new PrometheusToolMetrics({ operatorServers: ['acme'] });
    a.recordToolCall(call({}));
    const fromB = parseExposition(await b.metricsText());
    expect(family(fromB, 'tool_calls_total').samples).toHaveLength(0);
    expect(a.contentType).toMatch(/^text\/plain; version=0\.0\.4/);
  });

  it("labels a tenant server's id and its tools' names tenant_server, never by what the tenant chose (docs/adr/0055)", async () => {
    const metrics = new PrometheusToolMetrics({ operatorServers: ['acme'] });
    const tenantTool = { name: 'mcp.zq_secret_project.leak_customer_list', source: 'mcp' as const };
    metrics.recordToolCall(call({ ...tenantTool }));
    metrics.recordToolCall(call({ ...tenantTool, outcomeStatus: 'uncertain', reasonCode: 'tool.outcome_unknown', truncated: true }));
    metrics.recordToolCall(call({ name: 'mcp.other_tenant_srv.x', source: 'mcp' }));
    metrics.recordToolCall(call({ name: 'mcp.acme.create_ticket', source: 'mcp' }));
    metrics.recordMcpRequest({ server: 'zq_secret_project', method: 'tools/call', outcome: 'ok' });
    metrics.recordMcpConnectFailure({ server: 'zq_secret_project', reasonCode: 'tool.server_unreachable' });
    metrics.recordMcpRequest({ server: 'acme', method: 'tools/call', outcome: 'ok' });
    const text = await metrics.metricsText();
    expect(text).not.toMatch(/zq_secret_project|leak_customer_list|other_tenant_srv/);
    const families = parseExposition(text);
    const tenant = { name: 'tenant_server', source: 'mcp' };
    expect(counterValue(families, 'tool_calls_total', { ...tenant, outcome_status: 'succeeded' })).toBe(2);
    expect(counterValue(families, 'tool_uncertain_total', tenant)).toBe(1);
    expect(counterValue(families, 'tool_truncations_total', tenant)).toBe(1);
    expect(counterValue(families, 'tool_calls_total', { name: 'mcp.acme.create_ticket', source: 'mcp', outcome_status: 'succeeded' })).toBe(
      1,
    );
    expect(counterValue(families, 'mcp_requests_total', { server: 'tenant_server', method: 'tools/call', outcome: 'ok' })).toBe(1);
    expect(counterValue(families, 'mcp_requests_total', { server: 'acme', method: 'tools/call', outcome: 'ok' })).toBe(1);
    expect(counterValue(families, 'mcp_connect_failures_total', { server: 'tenant_server', reason_code: 'tool.server_unreachable' })).toBe(
      1,
    );
    // Without the operator's list, every server is a tenant's.
    const unconfigured = new PrometheusToolMetrics();
    unconfigured.recordMcpRequest({ server: 'acme', method: 'tools/list', outcome: 'ok' });
    expect(await unconfigured.metricsText()).not.toContain('acme');
  });

  it('adds process metrics only when asked', async () => {
    const withDefaults = parseExposition(await new PrometheusToolMetrics({ collectDefaultMetrics: true }).metricsText());
    expect(withDefaults.some((f) => f.name === 'process_cpu_user_seconds_total')).toBe(true);
    const without = parseExposition(await new PrometheusToolMetrics().metricsText());
    expect(without.map((f) => f.name).sort()).toEqual(Object.keys(SPECIFIED).sort());
  });

  it('NoopToolMetrics records nothing and never throws', () => {
    const noop = new NoopToolMetrics();
    expect(() => {
      noop.recordToolCall(call({}));
      noop.recordMcpRequest({ server: 's', method: 'tools/call', outcome: 'ok' });
      noop.recordMcpConnectFailure({ server: 's', reasonCode: 'tool.server_unreachable' });
      noop.recordReconciliation({ name: 'demo.external_write', outcome: 'applied' });
    }).not.toThrow();
  });
});
