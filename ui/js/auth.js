// Where the bearer token comes from: the URL fragment (#token=...), which is then removed
// from the address bar, or this tab's sessionStorage; and the task a fragment asks to show
// (#task=<id>). No DOM beyond what is passed in.

export const TOKEN_KEY = 'taskdeck.token';

/**
 * Splits `#token=abc&x=1` into the token and the fragment without it.
 * @returns {{token: string|null, hash: string}}
 */
export function parseTokenFragment(hash) {
  const raw = String(hash || '').replace(/^#/, '');
  if (!raw) return { token: null, hash: '' };
  const params = new URLSearchParams(raw);
  const token = params.get('token');
  if (token === null) return { token: null, hash: hash || '' };
  params.delete('token');
  const rest = params.toString();
  return { token: token.trim() || null, hash: rest ? `#${rest}` : '' };
}

/**
 * Reads the token: the fragment wins (and is stored, then scrubbed from the URL), then storage.
 * @param {{location: {hash: string, pathname: string, search: string}, storage: Storage, history: History}} env
 * @returns {string|null}
 */
export function loadToken({ location, storage, history }) {
  const { token, hash } = parseTokenFragment(location.hash);
  if (token) {
    try {
      storage.setItem(TOKEN_KEY, token);
    } catch {
      // storage may be unavailable; the token still works for this page
    }
    history.replaceState(null, '', `${location.pathname}${location.search}${hash}`);
    return token;
  }
  try {
    return storage.getItem(TOKEN_KEY);
  } catch {
    return null;
  }
}

export function saveToken(storage, token) {
  try {
    storage.setItem(TOKEN_KEY, token);
  } catch {
    // ignore
  }
}

export function forgetToken(storage) {
  try {
    storage.removeItem(TOKEN_KEY);
  } catch {
    // ignore
  }
}

/**
 * The task a fragment asks to show: `#task=<id>` (also next to other parameters, as in
 * `#token=...&task=...`). The desktop shell sets it when a notification is clicked.
 * @returns {string|null}
 */
export function taskFromHash(hash) {
  const raw = String(hash || '').replace(/^#/, '');
  if (!raw) return null;
  const id = new URLSearchParams(raw).get('task');
  return id && id.trim() ? id.trim() : null;
}

/**
 * What the signed-in principal may do, from `GET /v1/me` (`{principal, role, admin}`):
 * `seesAll` for a person (role `admin` or `human`: every principal's tasks, and the forms of
 * requests only a person may answer); `administers` for the admin alone (agents' tokens,
 * servers, policies). A Taskdeck that sends no `role` has only `admin`.
 * @param {{role?: string, admin?: boolean}|null|undefined} me
 * @returns {{seesAll: boolean, administers: boolean}}
 */
export function rights(me) {
  if (!me) return { seesAll: false, administers: false };
  const administers = me.role === 'admin' || (me.role === undefined && me.admin === true);
  return { seesAll: administers || me.role === 'human', administers };
}

/**
 * What the token screen says when the server refused the token this page was signed in with,
 * for whom it was (`me`, the last `GET /v1/me` answer, or null): a person's token (role
 * `human`) was revoked, and only whoever administers Taskdeck can give them a new one; the
 * admin's (or an unknown one) is replaced by the admin token `taskdeck serve` prints.
 * @returns {{error: string, person: boolean}} `person`: show the person's hint, not the admin token's
 */
export function refusedTokenText(me) {
  if (me && me.role === 'human') {
    const who = me.principal ? ` (${me.principal})` : '';
    return {
      error: `Your token${who} was revoked or is no longer valid. Ask whoever administers this Taskdeck for a new one, and paste it below.`,
      person: true,
    };
  }
  return { error: 'The token was not accepted: it was revoked, or it is not one this Taskdeck made. Paste a current token.', person: false };
}
