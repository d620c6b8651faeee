// The operator console's entry (docs/adr/0046): sign-in with an API key, then four views over
// the tenant API. No framework, no build step, no inline script (the CSP forbids it).
import { api, credentials } from './api.js';
import { el, errorLine, replace } from './dom.js';
import { approvalsView } from './approvals.js';
import { mcpView } from './mcp.js';
import { reviewView } from './review.js';
import { runsView } from './runs.js';

const main = /** @type {HTMLElement} */ (document.getElementById('main'));
const who = /** @type {HTMLElement} */ (document.getElementById('who'));

const VIEWS = [
  ['approvals', 'Approvals', approvalsView],
  ['review', 'UNCERTAIN review', reviewView],
  ['runs', 'Runs', runsView],
  ['mcp', 'MCP servers', mcpView],
];

/** The running view's stop function (its polls and streams end with it). */
let stopView = () => {};

function signIn(message) {
  stopView();
  replace(who);
  const input = el('input', {
    type: 'password',
    id: 'api-key',
    name: 'api-key',
    autocomplete: 'off',
    size: 48,
    required: true,
    placeholder: 'vbk_…',
  });
  const status = el('div');
  const form = el(
    'form',
    {
      class: 'card',
      onsubmit: async (event) => {
        event.preventDefault();
        credentials.set(input.value.trim());
        try {
          // Any authenticated read proves the key; the views then ask with its scopes.
          await api('GET', '/v1/approvals?limit=1');
          start('approvals');
        } catch (error) {
          credentials.clear();
          replace(status, errorLine(error));
        }
      },
    },
    el('h2', {}, 'Sign in'),
    el(
      'p',
      {},
      'Paste a tenant API key. It is kept in this tab only (session storage) and sent as a bearer token to the same API every client uses.',
    ),
    el('label', { for: 'api-key' }, 'API key '),
    input,
    ' ',
    el('button', { type: 'submit' }, 'Sign in'),
    status,
  );
  replace(main, message === undefined ? null : errorLine(message), form);
  input.focus();
}

function start(name) {
  stopView();
  replace(
    who,
    el(
      'button',
      {
        type: 'button',
        onclick: () => {
          credentials.clear();
          signIn();
        },
      },
      'Sign out',
    ),
  );
  const body = el('section', { id: 'view' });
  const nav = el(
    'nav',
    {},
    VIEWS.map(([id, label]) =>
      el('button', { type: 'button', 'data-view': id, 'aria-current': id === name ? 'page' : false, onclick: () => start(id) }, label),
    ),
  );
  replace(main, nav, body);
  const view = VIEWS.find(([id]) => id === name) ?? VIEWS[0];
  stopView = view[2](body, {
    open: (viewName, argument) => openView(viewName, argument),
    signedOut: (error) => {
      credentials.clear();
      signIn(error);
    },
  });
}

/** Another view with an argument (a run id from an approval, say). */
function openView(name, argument) {
  if (argument !== undefined) sessionStorage.setItem(`veetbot.console.${name}`, argument);
  start(name);
}

if (credentials.get() === null) signIn();
else start('approvals');
