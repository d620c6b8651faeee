// The approvals queue (docs/adr/0047): each pending call with its tool, its arguments (as text),
// the arguments hash and the policy rule and version that asked. A decision names the hash and
// the version shown, so the API refuses it (approval.arguments_changed /
// approval.policy_changed) when the approval changed since this view read it.
import { api } from './api.js';
import { el, errorLine, fields, jsonBlock, replace, when } from './dom.js';
import { pollLoop } from './poll.js';

const POLL_MS = 1500;

export function approvalsView(root, nav) {
  const status = el('div', { id: 'approvals-status' });
  const list = el('div', { id: 'approvals' });
  /** The last decision's answer, kept across refreshes (a refused card is redrawn with what it holds now). */
  const last = el('div', { id: 'decision-log', 'aria-live': 'polite' });
  replace(root, el('h2', {}, 'Pending approvals'), last, status, list);
  /** approval id -> { key, node }: a card is rebuilt only when what it binds to changes. */
  const cards = new Map();

  async function decide(approval, decision, out) {
    replace(out, 'Sending…');
    try {
      await api('POST', `/v1/approvals/${encodeURIComponent(approval.id)}/${decision}`, {
        arguments_hash: approval.arguments_hash,
        policy_version: approval.policy_version,
      });
      const done = `${decision === 'approve' ? 'Approved' : 'Denied'}: ${approval.tool_name} (${approval.call_id}).`;
      replace(out, el('span', { class: 'notice' }, done));
      replace(last, el('p', { class: 'notice' }, done));
    } catch (error) {
      // Refused (the approval changed, or was decided elsewhere): the card is redrawn from what
      // the approval holds now, and the refusal stays readable above the queue.
      replace(out, errorLine(error));
      replace(last, errorLine(error));
    }
    void refresh();
  }

  function card(approval) {
    const out = el('div', { 'data-testid': 'decision-result' });
    const bound = approval.arguments_hash !== null && approval.policy_version !== null;
    return el(
      'article',
      { class: 'card', 'data-approval-id': approval.id, 'data-policy-version': approval.policy_version ?? '' },
      el('h3', {}, approval.tool_name),
      fields([
        ['call', approval.call_id],
        ['run / step', `${approval.run_id} / ${approval.step_number}`],
        ['requested', when(approval.requested_at)],
        ['arguments hash', el('code', { 'data-testid': 'arguments-hash' }, approval.arguments_hash ?? '—')],
        ['policy rule', el('code', { 'data-testid': 'policy-rule' }, approval.policy_rule_id ?? '—')],
        ['policy version', el('code', { 'data-testid': 'policy-version' }, approval.policy_version ?? '—')],
      ]),
      el('p', {}, 'Arguments (untrusted, shown as text):'),
      jsonBlock(approval.arguments, 'arguments'),
      el(
        'div',
        { class: 'actions' },
        el(
          'button',
          { type: 'button', 'data-action': 'approve', disabled: !bound, onclick: () => decide(approval, 'approve', out) },
          'Approve',
        ),
        el('button', { type: 'button', 'data-action': 'deny', disabled: !bound, onclick: () => decide(approval, 'deny', out) }, 'Deny'),
        el('button', { type: 'button', onclick: () => nav.open('runs', approval.run_id) }, 'Open run'),
        bound ? null : 'Asked before policy versions were recorded: it is asked again when its step runs.',
      ),
      out,
    );
  }

  const { refresh, stop } = pollLoop(POLL_MS, status, nav, async (isStopped) => {
    const { approvals } = await api('GET', '/v1/approvals?status=pending&limit=100');
    if (isStopped()) return;
    const seen = new Set();
    for (const approval of approvals) {
      seen.add(approval.id);
      const key = `${approval.status}|${approval.arguments_hash}|${approval.policy_version}`;
      const existing = cards.get(approval.id);
      if (existing?.key === key) continue;
      const node = card(approval);
      if (existing) existing.node.replaceWith(node);
      else list.appendChild(node);
      cards.set(approval.id, { key, node });
    }
    for (const [id, { node }] of cards) {
      if (seen.has(id)) continue;
      // Decided (here or elsewhere): leave the card a moment with its result, then drop it.
      cards.delete(id);
      node.setAttribute('data-decided', '');
      for (const button of node.querySelectorAll('button[data-action]')) button.setAttribute('disabled', '');
      window.setTimeout(() => node.remove(), 5000);
    }
    replace(status, approvals.length === 0 ? el('p', {}, 'Nothing is waiting for a decision.') : null);
  });

  void refresh();
  return stop;
}
