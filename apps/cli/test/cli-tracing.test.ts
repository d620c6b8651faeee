import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { veetbot } from './cli-process';

/**
 * docs/adr/0068: the CLI role traces from the same OpenTelemetry environment as the api and
 * workers. A real OTLP/HTTP (JSON) receiver: the command's root span arrives named by its
 * command words only, its flags' values never in it; with no endpoint nothing is sent.
 */
describe('the CLI traced from OTEL_* (docs/adr/0068)', () => {
  it('exports one root span per command, named by its words, and nothing when tracing is off', async () => {
    const bodies: string[] = [];
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      req.on('end', () => {
        if (req.url === '/v1/traces') bodies.push(body);
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const secretArgs = '{"expression":"1+1","note":"sk-cli-secret-argument"}';
      const traced = await veetbot({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint }, 'call', 'math.evaluate', '--args', secretArgs, '--dry-run');
      expect(traced.code, traced.stderr).toBe(0);
      const spans = bodies.flatMap((b) =>
        (
          JSON.parse(b) as {
            resourceSpans: {
              resource: { attributes: { key: string; value: { stringValue?: string } }[] };
              scopeSpans: { spans: { name: string; parentSpanId?: string }[] }[];
            }[];
          }
        ).resourceSpans.flatMap((rs) =>
          rs.scopeSpans.flatMap((ss) =>
            ss.spans.map((s) => ({ ...s, service: rs.resource.attributes.find((a) => a.key === 'service.name')?.value.stringValue })),
          ),
        ),
      );
      const root = spans.find((s) => s.name === 'veetbot call math.evaluate');
      expect(root, JSON.stringify(spans.map((s) => s.name))).toBeDefined();
      expect(root?.service).toBe('veetbot-cli');
      expect(bodies.join('')).not.toContain('sk-cli-secret-argument');

      const count = bodies.length;
      const quiet = await veetbot({}, 'registry', 'list');
      expect(quiet.code).toBe(0);
      expect(bodies).toHaveLength(count);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  }, 120_000);
});
