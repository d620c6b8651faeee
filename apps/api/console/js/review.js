// The UNCERTAIN review queue (§ Recovery: "UNCERTAIN; human review"; docs/adr/0047): what was
// sent, the watermark (effect_sent_at), the evidence the row holds; resolved as succeeded /
// failed / not applied with a required note. Resolutions already recorded are listed with who,
// when and why (GET /v1/invocations?status=uncertain carries each row's review).
import { api } from './api.js';
import { el, errorLine, fields, jsonBlock, replace, when } from './dom.js';
import { pollLoop } from './poll.js';

const POLL_MS = 3000;
const RESOLUTIONS = [
  ['succeeded', 'Succeeded: the effect took place'],
  ['failed', 'Failed: it was attempted and did not take effect'],
  ['not_applied', 'Not applied: it never reached the other side'],
];

// docs/adr/0063: what the sweep's reconciler tried before leaving the call to a person.
function reconciliationLine(r) {
  if (r === null || r === undefined) return el('p', { 'data-testid': 'reconciliation' }, 'No reconciler tried this call.');
  const next = r.next_attempt_at === null ? 'no further attempts' : `next attempt ${when(r.next_attempt_at)}`;
  return el(
    'p',
    { 'data-testid': 'reconciliation' },
    `Reconciler ${r.reconciler}: ${r.attempts} attempt(s), last answer ${r.last_outcome} (${next}). It saw: ${r.last_evidence}`,
  );
}

export function reviewView(root, nav) {
  const status = el('div');
  const queue = el('div', { id: 'uncertain' });
  const resolved = el('div', { id: 'resolved' });
  replace(root, el('h2', {}, 'UNCERTAIN calls waiting for review'), status, queue, el('h2', {}, 'Resolved'), resolved);
  const cards = new Map();

  function card(row) {
    // Required, checked here with a sentence (and by the API: 400 request.invalid without one).
    const note = el('textarea', { name: 'note', rows: 3, cols: 60, maxlength: 4000, 'aria-label': 'note' });
    const resolution = el(
      'select',
      { name: 'resolution', 'aria-label': 'resolution' },
      RESOLUTIONS.map(([v, label]) => el('option', { value: v }, label)),
    );
    const out = el('div');
    const form = el(
      'form',
      {
        onsubmit: async (event) => {
          event.preventDefault();
          if (note.value.trim() === '')
            return replace(out, el('p', { class: 'error' }, 'A note is required: say what you established and how.'));
          try {
            await api('POST', `/v1/review/uncertain/${encodeURIComponent(row.id)}/resolve`, {
              resolution: resolution.value,
              note: note.value,
            });
            replace(out, el('p', { class: 'notice' }, 'Resolved.'));
            void refresh();
          } catch (error) {
            replace(out, errorLine(error));
          }
        },
      },
      el('label', {}, 'Resolution ', resolution),
      el('br'),
      el('label', {}, 'Note (required) ', note),
      el('br'),
      el('button', { type: 'submit' }, 'Resolve'),
      out,
    );
    return el(
      'article',
      { class: 'card', 'data-invocation-id': row.id },
      el('h3', {}, row.tool_name),
      fields([
        ['call', row.call_id],
        ['run / step', `${row.run_id} / ${row.step_number}`],
        ['effect sent (watermark)', el('span', { 'data-testid': 'watermark' }, when(row.effect_sent_at))],
        ['started', when(row.started_at)],
        ['attempt', row.attempt_number],
        ['idempotency', row.idempotency_class],
        ['reason', row.reason_code],
        ['idempotency key', el('code', {}, row.idempotency_key)],
        ['policy version', row.policy_version],
      ]),
      el('p', {}, 'What was sent (arguments, shown as text):'),
      jsonBlock(row.arguments, 'sent'),
      el('p', {}, 'Evidence (the recorded error and result):'),
      jsonBlock({ error: row.error, result: row.result }, 'evidence'),
      reconciliationLine(row.reconciliation),
      el('div', { class: 'actions' }, el('button', { type: 'button', onclick: () => nav.open('runs', row.run_id) }, 'Open run')),
      form,
    );
  }

  function resolvedCard(row) {
    const review = row.review;
    return el(
      'article',
      { class: 'card', 'data-reviewed-id': row.id },
      el('h3', {}, `${row.tool_name} — ${review.resolution}`),
      fields([
        ['call', row.call_id],
        ['resolved by', review.reviewed_by],
        ['resolved at', when(review.reviewed_at)],
        ['why', el('span', { 'data-testid': 'review-note' }, review.note)],
      ]),
    );
  }

  const { refresh, stop } = pollLoop(POLL_MS, status, nav, async (isStopped) => {
    const [{ invocations: open }, { invocations: all }] = await Promise.all([
      api('GET', '/v1/review/uncertain?limit=100'),
      api('GET', '/v1/invocations?status=uncertain&limit=100'),
    ]);
    if (isStopped()) return;
    const seen = new Set();
    for (const row of open) {
      seen.add(row.id);
      if (cards.has(row.id)) continue;
      const node = card(row);
      queue.appendChild(node);
      cards.set(row.id, node);
    }
    for (const [id, node] of cards) {
      if (seen.has(id)) continue;
      node.remove();
      cards.delete(id);
    }
    replace(status, open.length === 0 ? el('p', {}, 'No UNCERTAIN call is waiting.') : null);
    replace(resolved, all.filter((row) => row.review !== null).map(resolvedCard));
  });

  void refresh();
  return stop;
}
