// Sign-in: the token screen (shown when the page has no token, or the server refused it) and
// what a refused token stops. The page itself starts in app.js once a token is accepted.

import { createApi } from './api.js';
import { saveToken, forgetToken, refusedTokenText } from './auth.js';
import { $, inflate } from './dom.js';
import { state } from './state.js';

/** Closes the live stream (live.js opens it), if one is open. */
export function closeStream() {
  if (state.stream) state.stream.close();
  state.stream = null;
}

/** What runs with a token the server accepted (initTokenScreen's `start`). */
let onToken = null;

/** Whether the token screen speaks to a person whose own token was refused (their hint: ask
 *  whoever administers Taskdeck) rather than of the admin token `taskdeck serve` prints. */
let forPerson = false;

/** Shows the token screen with `message` (none: ''); its form is put in place and wired the first
 *  time (index.html keeps it in a template: most starts never show it). */
export function showTokenScreen(message) {
  const screen = $('token-screen');
  if (screen.querySelector(':scope > template')) {
    inflate(screen);
    wireTokenForm();
  }
  $('boot').hidden = true;
  $('app').hidden = true;
  $('token-screen').hidden = false;
  $('token-hint-admin').hidden = forPerson;
  $('token-hint-person').hidden = !forPerson;
  const err = $('token-error');
  err.textContent = message || '';
  err.hidden = !message;
  $('token-input').value = '';
  $('token-input').focus();
}

/** A request or the stream got 401: forget the token, stop the live parts, ask for a token. */
export function onAuthError() {
  // /v1/me and the stream may both be refused: the token screen is shown once.
  if (state.authFailed) return;
  state.authFailed = true;
  forgetToken(sessionStorage);
  closeStream();
  state.ticker.stopAll();
  const said = refusedTokenText(state.me);
  forPerson = said.person;
  showTokenScreen(said.error);
}

/** Notes what the token form does: `start(token)` runs with a token the server accepted. */
export function initTokenScreen(start) {
  onToken = start;
}

/** Wires the token form, once it is in the page. */
function wireTokenForm() {
  const input = $('token-input');
  const show = $('token-show');
  show.addEventListener('click', () => {
    const visible = input.type === 'text';
    input.type = visible ? 'password' : 'text';
    show.textContent = visible ? 'Show' : 'Hide';
    show.setAttribute('aria-pressed', String(!visible));
  });
  $('token-form').addEventListener('submit', async (e) => {
    e.preventDefault();
    const token = input.value.trim();
    if (!token) {
      showTokenScreen('Paste the token first.');
      return;
    }
    const probe = createApi(() => token);
    try {
      await probe.me();
    } catch (err) {
      showTokenScreen(err.status === 401 ? 'That token was not accepted. Check that you copied the whole file content.' : `Could not reach Taskdeck: ${err.message}`);
      return;
    }
    saveToken(sessionStorage, token);
    onToken(token);
  });
}
