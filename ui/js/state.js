// The page's state: one object, every field declared here with what it holds. The other
// modules read and write these fields; none adds a field of its own (the object is sealed:
// assigning an undeclared field throws). Creating it touches no DOM (only the list model and
// the desktop shell's bridge, if there is one; the clocks are set only when needed).

import { TaskList, InputInbox, defaultFilters } from './tasks-model.js';
import { desktopBridge } from './notify-settings.js';
import { ApprovalInbox } from './approvals-model.js';
import { createTicker } from './timing.js';

/** The detail pane until its modules have loaded: no task is open. */
export const NO_DETAIL = {
  taskId: null,
  task: null,
  tick() {},
  onChange() {},
  scheduleRefetch() {},
  shortcutPrompt: () => null,
  hasLockedPrompts: () => false,
  syncPrompts() {},
  close() {},
  requestCancel() {},
};

export const state = Object.seal({
  // ------------------------------------------------------------ sign-in
  /** The access token in use (from the fragment, the tab's storage or the token screen). */
  token: null,
  /** /v1/me's answer ({ principal, admin }) once it came; null before (or when it failed). */
  me: null,
  /** The /v1 client (createApi) for `token`; null before start(). */
  api: null,
  /** True once a request or the stream was refused with 401 (the token screen shows, once). */
  authFailed: false,
  /** True once initApp() has wired the page (it runs once, even when a new token starts again). */
  initialized: false,

  // ------------------------------------------------------------ live updates
  /** The open event stream (openEventStream's handle), or null. */
  stream: null,
  /** The stream's state for the top bar: connecting | open | reconnecting | closed. */
  streamState: 'connecting',
  /** When the stream went down (ms since the epoch; offline-banner.js), or null while it is
   *  open: a live task's state is known as of then, so its running time stops there. */
  streamDownSince: null,
  /** The clocks of what shows a running time (createTicker: 'list', 'detail', 'inbox',
   *  'approvals'), each running only while its part needs it; all stopped on sign-out. */
  ticker: createTicker(),

  // ------------------------------------------------------------ the task list
  /** The loaded tasks under the current filters, their counts and the paused changes. */
  model: new TaskList(defaultFilters()),
  /** The virtualized list's view (ListView) over `model`; created by initApp(). */
  list: null,
  /** Statuses the chips filter on (empty: all). */
  statusFilter: new Set(),
  /** Counts list loads: an answer for an older generation is dropped. */
  generation: 0,
  /** True while the first page for the current filters loads. */
  loading: false,
  /** True while a further page (nextCursor) loads. */
  loadingMore: false,
  /** The last failed list load's error (shown in the footer), or null. */
  loadError: null,
  /** True once a first page was loaded (the footer says "Updating…" rather than "Loading…"). */
  listLoaded: false,
  /** Tool names seen (the tool filter's options). */
  tools: new Set(),
  /** Principals seen (the principal filter's options, admin only). */
  principals: new Set(),

  // ------------------------------------------------------------ selection
  /** Ids of the selected tasks (bulk cancel). */
  selected: new Set(),
  /** The list index last toggled (Shift extends from it), or -1. */
  lastToggled: -1,

  // ------------------------------------------------------------ inbox and detail
  /** The tasks waiting for input ("Needs input" above the list). */
  inbox: new InputInbox(),
  /** The pending approvals (GET /v1/approvals): the queue, what is open, highlighted, selected. */
  approvals: new ApprovalInbox(),
  /** The detail pane: NO_DETAIL until its modules load, then the DetailView. */
  detail: NO_DETAIL,
  /** The task being opened while the detail's modules load (Escape cancels it), or null. */
  opening: null,
  /** Counts openTask and closeDetail calls: an open that waited for the detail's modules is
   *  dropped when the detail was closed (or another task opened) meanwhile. */
  openSeq: 0,
  /** Settles when the last task asked for (openTask) is shown in the detail, or null: a key
   *  that acts on the open task's prompt waits for it. */
  openDone: null,
  /** Settles when the inbox's and the approval queue's first loads are done, or null before
   *  they start: a key that goes to them waits for it. */
  queuesLoaded: null,

  // ------------------------------------------------------------ desktop shell
  /** The desktop shell's commands (notification settings...), or null in a plain browser. */
  desktop: desktopBridge(globalThis.__TAURI__),
  /** In a plain browser, called with each live change to notify of it (browser-notify.js);
   *  null before rest.js has loaded, and in the desktop window (the desktop notifies). */
  notifyChange: null,
});
