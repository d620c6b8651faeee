// Runs and their steps, live (docs/adr/0046): the run, each invocation's outcome, its events as
// they arrive on the run's SSE stream, and its artifacts — downloaded with the recorded sha256
// shown beside the one computed over the bytes that arrived.
import { api, ApiError, downloadArtifact, followEvents, query } from './api.js';
import { el, errorLine, fields, replace, when } from './dom.js';

const SELECTED = 'veetbot.console.runs';

export function runsView(root, nav) {
  const input = el('input', { name: 'run-id', size: 40, placeholder: 'run id', 'aria-label': 'run id' });
  const recent = el('div', { id: 'recent-runs' });
  const detail = el('div', { id: 'run-detail' });
  let stopRun = () => {};

  const open = (runId) => {
    stopRun();
    sessionStorage.setItem(SELECTED, runId);
    input.value = runId;
    stopRun = runDetail(detail, runId, nav);
  };

  replace(
    root,
    el('h2', {}, 'Runs'),
    el(
      'form',
      {
        class: 'actions',
        onsubmit: (event) => {
          event.preventDefault();
          if (input.value.trim() !== '') open(input.value.trim());
        },
      },
      input,
      el('button', { type: 'submit' }, 'Open run'),
    ),
    recent,
    detail,
  );

  // Recent runs: the distinct runs of the latest invocations the tenant can read.
  void api('GET', '/v1/invocations?limit=100')
    .then(({ invocations }) => {
      const runs = [...new Set(invocations.map((row) => row.run_id).reverse())].slice(0, 20);
      replace(
        recent,
        runs.length === 0
          ? null
          : el(
              'p',
              {},
              'Recent: ',
              runs.map((id) => el('button', { type: 'button', class: 'run-link', onclick: () => open(id) }, id.slice(0, 8))),
            ),
      );
    })
    .catch((error) => {
      if (error instanceof ApiError && error.status === 401) return nav.signedOut(error);
      replace(recent, errorLine(error));
    });

  const selected = sessionStorage.getItem(SELECTED);
  if (selected !== null) open(selected);
  return () => stopRun();
}

function runDetail(root, runId, nav) {
  const controller = new AbortController();
  const summary = el('div', { id: 'run-summary' });
  const table = el('div', { id: 'run-invocations' });
  const log = el('div', { class: 'events', id: 'run-events', 'aria-live': 'polite' });
  const status = el('div');
  replace(root, summary, el('h3', {}, 'Invocations'), table, el('h3', {}, 'Events (live)'), log, status);
  let pending = 0;
  // The table is redrawn only when its rows change, and a download's sha256 line outlives a redraw.
  let shown = '';
  const downloads = new Map();

  async function refresh() {
    try {
      const [run, { invocations }] = await Promise.all([
        api('GET', `/v1/runs/${encodeURIComponent(runId)}`),
        api('GET', `/v1/invocations${query({ run_id: runId, limit: 100 })}`),
      ]);
      if (controller.signal.aborted) return;
      replace(
        summary,
        el('h3', {}, `Run ${run.id}`),
        fields([
          ['status', el('span', { 'data-testid': 'run-status' }, run.status)],
          ['session', run.session_id],
          ['created', when(run.created_at)],
          ['deadline', when(run.deadline_at)],
          ['failure', run.failure_reason],
        ]),
      );
      const text = JSON.stringify(invocations);
      if (text !== shown) {
        shown = text;
        replace(table, invocationTable(invocations, downloads));
      }
    } catch (error) {
      if (error instanceof ApiError && error.status === 401) return nav.signedOut(error);
      replace(status, errorLine(error));
    }
  }

  void refresh();
  void followEvents(
    runId,
    (event) => {
      log.appendChild(el('div', { 'data-event-type': event.type }, `#${event.id} ${event.type} ${JSON.stringify(event.data)}`));
      log.scrollTop = log.scrollHeight;
      // Several events arrive together: one read of the rows after them.
      window.clearTimeout(pending);
      pending = window.setTimeout(refresh, 100);
    },
    controller.signal,
    (error) => replace(status, errorLine(error)),
  );
  return () => {
    controller.abort();
    window.clearTimeout(pending);
  };
}

function invocationTable(rows, downloads) {
  if (rows.length === 0) return el('p', {}, 'No invocation yet.');
  return el(
    'table',
    {},
    el(
      'thead',
      {},
      el(
        'tr',
        {},
        ['step', 'call', 'tool', 'status', 'outcome', 'reason', 'policy version', 'artifact'].map((h) => el('th', {}, h)),
      ),
    ),
    el(
      'tbody',
      {},
      rows.map((row) =>
        el(
          'tr',
          { 'data-invocation-id': row.id, 'data-call-id': row.call_id, 'data-status': row.status },
          el('td', {}, row.step_number),
          el('td', {}, row.call_id),
          el('td', {}, row.tool_name),
          el('td', { 'data-testid': 'status' }, row.status),
          el('td', {}, row.outcome_status ?? '—'),
          el('td', {}, row.reason_code ?? '—'),
          el('td', {}, row.policy_version ?? '—'),
          el('td', {}, row.artifact_id === null ? '—' : artifactCell(row.artifact_id, downloads)),
        ),
      ),
    ),
  );
}

function artifactCell(artifactId, downloads) {
  const out = downloads.get(artifactId) ?? el('span');
  downloads.set(artifactId, out);
  return el(
    'span',
    {},
    el(
      'button',
      {
        type: 'button',
        'data-artifact-id': artifactId,
        onclick: async () => {
          replace(out, ' downloading…');
          try {
            const { blob, recorded, computed } = await downloadArtifact(artifactId);
            const ok = recorded === computed;
            replace(
              out,
              el(
                'span',
                { class: ok ? 'notice' : 'error', 'data-testid': 'artifact-sha256' },
                ` sha256 ${computed} ${ok ? '(matches the recorded sha256)' : `(recorded ${recorded}: MISMATCH)`}`,
              ),
            );
            if (!ok) return;
            const url = URL.createObjectURL(blob);
            const link = el('a', { href: url, download: `artifact-${artifactId}` });
            document.body.appendChild(link);
            link.click();
            link.remove();
            window.setTimeout(() => URL.revokeObjectURL(url), 10_000);
          } catch (error) {
            replace(out, errorLine(error));
          }
        },
      },
      'Download',
    ),
    out,
  );
}
