// The console is a client of the tenant API and nothing else (docs/adr/0046): every request goes
// to the same /v1 routes, with the key the operator typed, as `Authorization: Bearer`, so it has
// exactly that key's tenant and scopes. The key lives in sessionStorage only: gone when the tab
// closes, never in local storage, a cookie or a URL.

const KEY = 'veetbot.console.api_key';

export const credentials = {
  /** @returns {string | null} */
  get() {
    return sessionStorage.getItem(KEY);
  },
  /** @param {string} key */
  set(key) {
    sessionStorage.setItem(KEY, key);
  },
  clear() {
    sessionStorage.removeItem(KEY);
  },
};

/** An API error: the status and the stable `code` of `{ error: { code, message } }`. */
export class ApiError extends Error {
  /** @param {number} status @param {string} code @param {string} message */
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

function headers(extra = {}) {
  const key = credentials.get();
  return { Accept: 'application/json', ...(key === null ? {} : { Authorization: `Bearer ${key}` }), ...extra };
}

async function failure(response) {
  let code = 'http.error';
  let message = `HTTP ${response.status}`;
  try {
    const body = await response.json();
    if (body && typeof body.error === 'object' && body.error !== null) {
      code = String(body.error.code);
      message = String(body.error.message);
    }
  } catch {
    // Not the API's JSON error: keep the status line.
  }
  return new ApiError(response.status, code, message);
}

/**
 * One JSON request to the API.
 * @param {'GET'|'POST'|'PATCH'|'PUT'|'DELETE'} method
 * @param {string} path
 * @param {unknown} [body]
 */
export async function api(method, path, body) {
  const response = await fetch(path, {
    method,
    headers: headers(body === undefined ? {} : { 'Content-Type': 'application/json' }),
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    cache: 'no-store',
    credentials: 'omit',
    redirect: 'error',
  });
  if (!response.ok) throw await failure(response);
  return response.status === 204 ? null : response.json();
}

/** Query text from an object (undefined values left out). */
export function query(values) {
  const search = new URLSearchParams();
  for (const [k, v] of Object.entries(values)) if (v !== undefined && v !== null && v !== '') search.set(k, String(v));
  const text = search.toString();
  return text === '' ? '' : `?${text}`;
}

/**
 * A run's events, live, from GET /v1/events (text/event-stream). EventSource cannot send an
 * Authorization header, so the stream is read with fetch; a dropped stream resumes after the
 * last sequence seen (Last-Event-ID).
 * @param {string} runId
 * @param {(event: { id: number, type: string, data: unknown }) => void} onEvent
 * @param {AbortSignal} signal
 * @param {(error: unknown) => void} onError
 */
export async function followEvents(runId, onEvent, signal, onError) {
  let last = 0;
  while (!signal.aborted) {
    let pause = 2000;
    try {
      const response = await fetch(`/v1/events${query({ run_id: runId })}`, {
        headers: headers({ Accept: 'text/event-stream', ...(last > 0 ? { 'Last-Event-ID': String(last) } : {}) }),
        cache: 'no-store',
        credentials: 'omit',
        signal,
      });
      if (!response.ok) throw await failure(response);
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        let end = buffer.indexOf('\n\n');
        while (end !== -1) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          end = buffer.indexOf('\n\n');
          const message = { id: 0, type: 'message', data: '' };
          for (const line of block.split('\n')) {
            if (line.startsWith('id: ')) message.id = Number(line.slice(4));
            else if (line.startsWith('event: ')) message.type = line.slice(7);
            else if (line.startsWith('data: ')) message.data += line.slice(6);
          }
          if (message.data === '') continue;
          last = Math.max(last, message.id);
          let data;
          try {
            data = JSON.parse(message.data);
          } catch {
            data = message.data;
          }
          onEvent({ id: message.id, type: message.type, data });
        }
      }
    } catch (error) {
      if (signal.aborted) return;
      onError(error);
      // 429 events.streams_exhausted (docs/adr/0054): the tenant's streams are all open; one
      // frees when another closes, so try again later rather than give up.
      if (error instanceof ApiError && error.status === 429) pause = 5000;
      else if (error instanceof ApiError && error.status < 500) return;
    }
    await new Promise((resolve) => setTimeout(resolve, pause));
  }
}

/**
 * An artifact's bytes with the sha256 the API recorded (X-Veetbot-Artifact-Sha256) and the one
 * computed here over what arrived.
 * @param {string} artifactId
 */
export async function downloadArtifact(artifactId) {
  const response = await fetch(`/v1/artifacts/${encodeURIComponent(artifactId)}`, {
    headers: headers({ Accept: '*/*' }),
    cache: 'no-store',
    credentials: 'omit',
  });
  if (!response.ok) throw await failure(response);
  const bytes = await response.arrayBuffer();
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
  const computed = Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('');
  return {
    // Served as an opaque download whatever the recorded media type: the console never renders it.
    blob: new Blob([bytes], { type: 'application/octet-stream' }),
    recorded: response.headers.get('X-Veetbot-Artifact-Sha256'),
    computed,
    trust: response.headers.get('X-Veetbot-Artifact-Trust'),
  };
}
