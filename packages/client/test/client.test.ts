import { describe, expect, it } from 'vitest';
import { ApiError, parseEventStream, VeetbotClient, type SseMessage } from '../src';

/** A fetch that records each request and answers with `respond`. */
function fakeFetch(respond: (url: string, init: RequestInit) => Response) {
  const requests: { url: string; init: RequestInit }[] = [];
  const fetch = async (url: string, init: RequestInit = {}) => {
    requests.push({ url, init });
    return respond(url, init);
  };
  return { fetch, requests };
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json', ...headers } });

function streamOf(chunks: string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
      controller.close();
    },
  });
}

async function collect(stream: ReadableStream<Uint8Array>): Promise<SseMessage[]> {
  const out: SseMessage[] = [];
  for await (const message of parseEventStream(stream)) out.push(message);
  return out;
}

describe('requests', () => {
  it('sends the key, JSON bodies, encoded path segments and only the query values given', async () => {
    const { fetch, requests } = fakeFetch(() => json(200, { invocations: [], next_cursor: null }));
    const client = new VeetbotClient({ baseUrl: 'http://h:1/', apiKey: 'vbk_abcdefghijklmnop', fetch });
    await client.listInvocations({ run_id: 'r1', status: 'uncertain', limit: 5 });
    await client.getMcpServer('a/b');
    await client.openSession({ agent_id: 'x' }).catch(() => undefined);
    expect(requests[0]!.url).toBe('http://h:1/v1/invocations?run_id=r1&status=uncertain&limit=5');
    expect((requests[0]!.init.headers as Record<string, string>).Authorization).toBe('Bearer vbk_abcdefghijklmnop');
    expect(requests[1]!.url).toBe('http://h:1/v1/mcp/servers/a%2Fb');
    expect(requests[2]!.init).toMatchObject({ method: 'POST', body: '{"agent_id":"x"}' });
    expect((requests[2]!.init.headers as Record<string, string>)['Content-Type']).toBe('application/json');
  });

  it('reports a 202 step submission with its Location', async () => {
    const outcome = { step_number: 3, status: 'running', items: [], pending_approvals: [], synthesis_only: false, run_status: 'running' };
    const { fetch } = fakeFetch(() => json(202, outcome, { Location: '/v1/runs/r/steps/3' }));
    const client = new VeetbotClient({ baseUrl: 'http://h', fetch });
    const submitted = await client.submitStep('r', {
      step_number: 3,
      calls: [{ call_id: 'c', tool_name: 't.x', arguments: {}, context_trust: ['user'] }],
    });
    expect(submitted).toEqual({ status: 202, outcome, location: '/v1/runs/r/steps/3' });
  });
});

describe('errors', () => {
  it('decodes the API error shape, with Retry-After', async () => {
    const { fetch } = fakeFetch(() => json(503, { error: { code: 'run.busy', message: 'busy' } }, { 'Retry-After': '2' }));
    const error = await new VeetbotClient({ baseUrl: 'http://h', fetch }).cancelRun('r').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 503, code: 'run.busy', message: 'busy', retryAfterSeconds: 2, retryable: true });
  });

  it('anything else is client.unexpected_response, never a parse crash', async () => {
    const { fetch } = fakeFetch(() => new Response('<html>bad gateway</html>', { status: 502 }));
    const error = await new VeetbotClient({ baseUrl: 'http://h', fetch }).getRun('r').catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 502, code: 'client.unexpected_response', retryable: false });
  });
});

describe('parseEventStream', () => {
  it('parses ids, event names and multi-line data across chunk boundaries and line endings; skips comments', async () => {
    const messages = await collect(
      streamOf([
        'retry: 2000\n: connected\n\nid: 1\nevent: tool.call.prop',
        'osed\ndata: {"a":1}\n\n',
        'id: 2\r\nevent: x\r\ndata: line one\r\ndata: line two\r\n\r\n: heartbeat\n\n',
        'data: no id\n\n',
      ]),
    );
    expect(messages).toEqual([
      { id: '1', event: 'tool.call.proposed', data: '{"a":1}' },
      { id: '2', event: 'x', data: 'line one\nline two' },
      { id: '2', event: 'message', data: 'no id' },
    ]);
  });

  it('drops a message cut off before its blank line', async () => {
    expect(await collect(streamOf(['id: 1\ndata: complete\n\nid: 2\ndata: cut']))).toEqual([
      { id: '1', event: 'message', data: 'complete' },
    ]);
  });

  it('the client iterator yields parsed events and sends Last-Event-ID', async () => {
    const body =
      'id: 5\nevent: e\ndata: {"id":"x","run_id":null,"sequence":5,"type":"e","payload":{},"created_at":"2030-01-01T00:00:00.000Z"}\n\n';
    const { fetch, requests } = fakeFetch(
      () => new Response(streamOf([body]), { status: 200, headers: { 'Content-Type': 'text/event-stream' } }),
    );
    const client = new VeetbotClient({ baseUrl: 'http://h', apiKey: 'vbk_abcdefghijklmnop', fetch });
    const events = [];
    for await (const event of client.events({ runId: 'r', lastEventId: 4 })) events.push(event);
    expect(events.map((e) => e.sequence)).toEqual([5]);
    expect(requests[0]!.url).toBe('http://h/v1/events?run_id=r');
    expect((requests[0]!.init.headers as Record<string, string>)['Last-Event-ID']).toBe('4');
  });
});
