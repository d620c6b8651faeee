import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One span as an OTLP/JSON export carried it, with its resource's service.name. */
export interface ReceivedSpan {
  readonly service: string;
  readonly name: string;
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string;
  readonly kind: number;
  readonly links: readonly { readonly traceId: string; readonly spanId: string }[];
  readonly attributes: Readonly<Record<string, unknown>>;
}

/**
 * A real OTLP/HTTP receiver for the tests (docs/adr/0068): `POST /v1/traces` with the JSON
 * encoding, which is what @opentelemetry/exporter-trace-otlp-http sends. Ids arrive as hex in
 * the JS exporter's JSON; base64 (the protobuf-JSON mapping) is decoded too.
 */
export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  readonly contentTypes: string[] = [];
  #server: Server;

  private constructor(server: Server) {
    this.#server = server;
  }

  static async start(): Promise<OtlpReceiver> {
    let receiver: OtlpReceiver | null = null;
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        if (req.method !== 'POST' || req.url !== '/v1/traces') {
          res.writeHead(404).end();
          return;
        }
        receiver!.contentTypes.push(req.headers['content-type'] ?? '');
        try {
          receiver!.#take(JSON.parse(Buffer.concat(chunks).toString('utf8')));
          res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        } catch {
          res.writeHead(400).end();
        }
      });
    });
    receiver = new OtlpReceiver(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  /** The base URL (OTEL_EXPORTER_OTLP_ENDPOINT). */
  get url(): string {
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  trace(traceId: string): ReceivedSpan[] {
    return this.spans.filter((s) => s.traceId === traceId);
  }

  close(): Promise<void> {
    this.#server.closeAllConnections();
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }

  #take(body: unknown): void {
    for (const rs of (body as { resourceSpans?: unknown[] }).resourceSpans ?? []) {
      const r = rs as { resource?: { attributes?: unknown[] }; scopeSpans?: { spans?: unknown[] }[] };
      const service = String(attributesOf(r.resource?.attributes)['service.name'] ?? '');
      for (const scope of r.scopeSpans ?? []) {
        for (const raw of scope.spans ?? []) {
          const s = raw as Record<string, unknown>;
          this.spans.push({
            service,
            name: String(s.name),
            traceId: hexId(s.traceId),
            spanId: hexId(s.spanId),
            parentSpanId: hexId(s.parentSpanId),
            kind: Number(s.kind ?? 0),
            links: ((s.links as Record<string, unknown>[] | undefined) ?? []).map((l) => ({
              traceId: hexId(l.traceId),
              spanId: hexId(l.spanId),
            })),
            attributes: attributesOf(s.attributes as unknown[] | undefined),
          });
        }
      }
    }
  }
}

function hexId(value: unknown): string {
  if (typeof value !== 'string' || value === '') return '';
  return /^[0-9a-f]+$/.test(value) && (value.length === 32 || value.length === 16) ? value : Buffer.from(value, 'base64').toString('hex');
}

function attributesOf(list: unknown[] | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const entry of list ?? []) {
    const { key, value } = entry as { key: string; value: Record<string, unknown> };
    out[key] = value.stringValue ?? value.intValue ?? value.boolValue ?? value.doubleValue ?? null;
  }
  return out;
}
