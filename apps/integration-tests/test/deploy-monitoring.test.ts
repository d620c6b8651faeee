import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parser } from '@prometheus-io/lezer-promql';
import { VeetbotClient } from '@veetbot/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseDocument } from 'yaml';
import { z } from 'zod';
import { REPO, startEmbeddedScene, startScene, workerOperationsUrl } from '../src/e2e-processes';

/*
 * Issue 26 item 6 (docs/adr/0071, docs/operations.md): the Grafana dashboard and the Prometheus
 * alert rules in deploy/ name only series a live /metrics serves. The product is started here
 * (with DATABASE_URL the api and a worker process on a fresh PostgreSQL database, both scraped;
 * otherwise `pnpm start`'s one process), makes one call, and is scraped over HTTP; every PromQL
 * expression of the dashboard and the rules is parsed with Prometheus's own grammar
 * (@prometheus-io/lezer-promql) and each metric it selects must be served — or be `up`, which
 * Prometheus records itself for every target. A renamed or invented metric fails here, not on
 * an operator's empty panel or an alert that can never fire.
 */

const DEPLOY = join(REPO, 'deploy');
/** Series Prometheus synthesizes for each scrape target: not served by /metrics, always there. */
const PROMETHEUS_SERIES = new Set(['up']);
/** The eight metrics of § Spans and metrics, and tool_reconciled_total (docs/adr/0063). */
const PRODUCT_METRICS = [
  'tool_calls_total',
  'tool_failures_total',
  'tool_duration_seconds',
  'tool_output_bytes',
  'tool_truncations_total',
  'tool_uncertain_total',
  'mcp_requests_total',
  'mcp_connect_failures_total',
  'tool_reconciled_total',
];

const AlertRule = z
  .object({
    alert: z.string().regex(/^Veetbot[A-Za-z]+$/),
    expr: z.string().min(1),
    for: z
      .string()
      .regex(/^\d+[smh]$/)
      .optional(),
    labels: z.object({ severity: z.enum(['critical', 'warning', 'info']) }).strict(),
    annotations: z
      .object({
        summary: z.string().min(1),
        description: z.string().min(1).optional(),
        runbook: z.string().regex(/^docs\/operations\.md#[a-z-]+$/),
      })
      .strict(),
  })
  .strict();
const RuleFile = z.object({ groups: z.array(z.object({ name: z.string(), rules: z.array(AlertRule).min(1) }).strict()).min(1) }).strict();

interface Target {
  readonly expr: string;
}
interface Panel {
  readonly id: number;
  readonly type: string;
  readonly targets?: readonly Target[];
  readonly panels?: readonly Panel[];
}
interface Dashboard {
  readonly uid: string;
  readonly panels: readonly Panel[];
  readonly templating: { readonly list: readonly { readonly name: string; readonly definition?: string }[] };
}

/** Grafana's interval variables become a duration so the expression is plain PromQL. */
function asPromql(expr: string): string {
  return expr.replaceAll(/\$__(rate_interval|interval|range)\b/g, '5m');
}

/** The metric names an expression selects, and its job matchers; throws on a syntax error. */
function selected(expr: string): { metrics: string[]; jobs: string[]; labels: string[] } {
  const text = asPromql(expr);
  const metrics: string[] = [];
  const jobs: string[] = [];
  const labels: string[] = [];
  let error: number | null = null;
  parser.parse(text).iterate({
    enter(node) {
      if (node.type.isError) error = node.from;
      if (node.name === 'Identifier' && node.node.parent?.name === 'VectorSelector') metrics.push(text.slice(node.from, node.to));
      if (node.name === 'LabelName') labels.push(text.slice(node.from, node.to));
      if (node.name === 'UnquotedLabelMatcher') {
        const name = node.node.getChild('LabelName');
        const value = node.node.getChild('StringLiteral');
        if (name !== null && value !== null && text.slice(name.from, name.to) === 'job')
          jobs.push(JSON.parse(text.slice(value.from, value.to)));
      }
    },
  });
  if (error !== null) throw new Error(`not PromQL at ${error}: ${text}`);
  return { metrics, jobs, labels };
}

function panelsOf(panels: readonly Panel[]): Panel[] {
  return panels.flatMap((p) => [p, ...panelsOf(p.panels ?? [])]);
}

/** Metric names in the text exposition, with each histogram's _bucket, _sum and _count. */
function served(exposition: string): Set<string> {
  const names = new Set<string>();
  for (const [, name, type] of exposition.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    names.add(name!);
    if (type === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) names.add(`${name}${suffix}`);
    if (type === 'summary') for (const suffix of ['_sum', '_count']) names.add(`${name}${suffix}`);
  }
  return names;
}

/** A selected series' family: the histogram's name for its _bucket/_sum/_count. */
function family(name: string): string {
  return name.replace(/_(bucket|sum|count)$/, '');
}

let scene: { readonly baseUrl: string; readonly demoKey: string; close(): Promise<void> };
/** The /metrics of the process that ran the call (the worker in the split deployment). */
let exposition: string;
/** Every process's /metrics: each must serve the same families. */
let expositions: string[];
let rules: z.infer<typeof RuleFile>;
let dashboard: Dashboard;
let scrapeJobs: string[];

beforeAll(async () => {
  let metricsUrls: string[];
  if (process.env.DATABASE_URL) {
    const split = await startScene({ workers: 1 });
    scene = split;
    metricsUrls = [`${workerOperationsUrl(split.workers[0]!)}/metrics`, `${split.baseUrl}/metrics`];
  } else {
    scene = await startEmbeddedScene();
    metricsUrls = [`${scene.baseUrl}/metrics`];
  }
  // One call, so the counters and histograms have samples as well as their # TYPE lines.
  const client = new VeetbotClient({ baseUrl: scene.baseUrl, apiKey: scene.demoKey });
  const session = await client.openSession({ agent_id: 'monitoring', enabled_tools: ['math.*'] });
  const run = await client.createRun({ session_id: session.id, deadline_seconds: 120 });
  const outcome = await client.submitStepAndWait(run.id, {
    step_number: 1,
    calls: [{ call_id: 'c', tool_name: 'math.evaluate', arguments: { expression: '1+1' }, context_trust: ['user'] }],
    wait_seconds: 20,
  });
  expect(outcome.items[0]?.outcome.status).toBe('succeeded');
  expositions = await Promise.all(metricsUrls.map(async (url) => (await fetch(url)).text()));
  exposition = expositions[0]!;

  const alerts = parseDocument(await readFile(join(DEPLOY, 'prometheus/veetbot-alerts.yml'), 'utf8'), { uniqueKeys: true });
  expect(alerts.errors).toEqual([]);
  rules = RuleFile.parse(alerts.toJS());
  const config = parseDocument(await readFile(join(DEPLOY, 'prometheus/prometheus.yml'), 'utf8'), { uniqueKeys: true });
  expect(config.errors).toEqual([]);
  const parsedConfig = config.toJS() as { rule_files: string[]; scrape_configs: { job_name: string }[] };
  expect(parsedConfig.rule_files).toEqual(['veetbot-alerts.yml']);
  scrapeJobs = parsedConfig.scrape_configs.map((c) => c.job_name);
  dashboard = JSON.parse(await readFile(join(DEPLOY, 'grafana/veetbot-dashboard.json'), 'utf8')) as Dashboard;
}, 180_000);

afterAll(async () => {
  await scene?.close();
});

describe('the dashboard and the alert rules in deploy/', () => {
  it('every live /metrics serves the nine metric families, and nothing else', () => {
    for (const text of expositions) {
      const typed = [...text.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]);
      expect(typed.sort()).toEqual([...PRODUCT_METRICS].sort());
    }
    // The call is there, so the names are checked against a registry with samples in it.
    expect(exposition).toMatch(/^tool_calls_total\{name="math\.evaluate",source="builtin",outcome_status="succeeded"\} 1$/m);
    expect(exposition).toMatch(/^tool_duration_seconds_bucket\{le="\+Inf",name="math\.evaluate",source="builtin"\} 1$/m);
  });

  it('the checker finds a metric name inside any expression, and refuses what is not PromQL', () => {
    expect(
      selected('histogram_quantile(0.9, sum by (le) (rate(tool_duration_secs_bucket{job=~"$job"}[$__rate_interval])))').metrics,
    ).toEqual(['tool_duration_secs_bucket']);
    expect(selected('absent(up{job="veetbot-worker"} == 1) and on () tool_calls_totl > 0').metrics).toEqual(['up', 'tool_calls_totl']);
    expect(served(exposition).has('tool_duration_secs_bucket')).toBe(false);
    expect(() => selected('sum(rate(tool_calls_total[5m])')).toThrow(/not PromQL/);
  });

  it('every alert rule is valid PromQL over served series, on the scrape jobs prometheus.yml defines', () => {
    const names = new Set<string>();
    const alerts = rules.groups.flatMap((g) => g.rules);
    expect(new Set(alerts.map((r) => r.alert)).size).toBe(alerts.length);
    for (const rule of alerts) {
      const { metrics, jobs, labels } = selected(rule.expr);
      expect(metrics.length, rule.alert).toBeGreaterThan(0);
      for (const name of metrics) {
        expect(served(exposition).has(name) || PROMETHEUS_SERIES.has(name), `${rule.alert}: ${name} is not served by /metrics`).toBe(true);
        names.add(family(name));
      }
      for (const job of jobs) expect(scrapeJobs, `${rule.alert}: job ${job}`).toContain(job);
      // § Spans and metrics: no tenant label, ever.
      expect(
        labels.filter((l) => /tenant/.test(l)),
        rule.alert,
      ).toEqual([]);
    }
    // Every product metric has an alert, and the one the specification names is alerted on.
    expect([...names].filter((n) => !PROMETHEUS_SERIES.has(n)).sort()).toEqual([...PRODUCT_METRICS].sort());
    expect(alerts.some((r) => selected(r.expr).metrics.includes('tool_uncertain_total'))).toBe(true);
    expect(alerts.filter((r) => selected(r.expr).metrics.includes('up')).map((r) => r.alert)).toEqual([
      'VeetbotApiDown',
      'VeetbotWorkerDown',
      'VeetbotNoWorker',
    ]);
  });

  it('every dashboard query is valid PromQL over served series, and the panels cover the nine metrics', () => {
    const names = new Set<string>();
    const panels = panelsOf(dashboard.panels);
    expect(new Set(panels.map((p) => p.id)).size).toBe(panels.length);
    const exprs = panels.flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p.id, expr: t.expr })));
    expect(exprs.length).toBeGreaterThanOrEqual(20);
    for (const { panel, expr } of exprs) {
      for (const name of selected(expr).metrics) {
        expect(served(exposition).has(name) || PROMETHEUS_SERIES.has(name), `panel ${panel}: ${name} is not served by /metrics`).toBe(true);
        names.add(family(name));
      }
    }
    // The variables' label_values(metric, label) queries name served metrics too.
    for (const variable of dashboard.templating.list) {
      const metric = /^label_values\((\w+),\s*\w+\)$/.exec(variable.definition ?? '')?.[1];
      if (variable.definition !== undefined) expect(metric, variable.name).toBeDefined();
      if (metric !== undefined) expect(served(exposition).has(metric), `variable ${variable.name}: ${metric}`).toBe(true);
    }
    expect([...names].filter((n) => !PROMETHEUS_SERIES.has(n)).sort()).toEqual([...PRODUCT_METRICS].sort());
  });
});
