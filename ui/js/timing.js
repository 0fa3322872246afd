// When a function runs: at most once (a lazy module load), at most once per animation frame
// (a redraw asked for by many changes), after the next frame (work that should not delay it), or
// every second only while there is something it updates (createTicker: the page's clocks). No
// DOM; unit-tested in ui/test/timing.test.mjs and ui/test/ticker.test.mjs.

/** `load` runs once; every call returns its promise. A load that failed (the server was away,
 *  say) is tried again by the next call. */
export function once(load) {
  let p = null;
  return () => {
    if (!p) {
      p = load();
      p.catch(() => {
        p = null;
      });
    }
    return p;
  };
}

/** A function that runs `fn` once in the next animation frame, however often it is called
 *  before then. `raf` is the frame scheduler (requestAnimationFrame; tests pass their own).
 *  Its `now()` runs `fn` at once instead, and a frame already asked for then runs nothing (unless
 *  it is asked for again): for a change that should reach the next frame's layout and paint
 *  directly, not wait for that frame's callbacks and show one frame later. */
export function oncePerFrame(fn, raf = (cb) => requestAnimationFrame(cb)) {
  let queued = false;
  let frameAsked = false;
  const schedule = () => {
    if (queued) return;
    queued = true;
    if (frameAsked) return; // the frame asked for before now() serves this call
    frameAsked = true;
    raf(() => {
      frameAsked = false;
      if (!queued) return;
      queued = false;
      fn();
    });
  };
  schedule.now = () => {
    queued = false;
    fn();
  };
  return schedule;
}

/**
 * Runs `fn` once, in a task after the next animation frame: work that the page needs soon but
 * that should not delay what that frame draws. A page that draws no frame (a hidden tab, where
 * requestAnimationFrame waits until it is shown) runs it after `maxWaitMs` all the same.
 * `raf` and `setTimer` are the frame and timer schedulers (tests pass their own).
 */
export function afterNextFrame(fn, { maxWaitMs = 100, raf = (cb) => requestAnimationFrame(cb), setTimer = (cb, ms) => setTimeout(cb, ms) } = {}) {
  let done = false;
  const run = () => {
    if (done) return;
    done = true;
    fn();
  };
  raf(() => setTimer(run, 0));
  setTimer(run, maxWaitMs);
}

/**
 * The page's clocks: the parts that show a running time (the list's live rows, the open live
 * task, the inbox's ages, the approvals' countdowns) each have one, and each runs only while its
 * part shows something the clock changes. A part says so with `need(name, true)` when such a
 * thing appears (a live change, a list load, a task opened) and `need(name, false)` when the last
 * one goes: with nothing running no timer is set, and the page does not wake up at all (issue
 * #17). Deciding needs no timer of its own: the parts ask as they redraw.
 * @param {{setTimer?: (fn: () => void, ms: number) => any, clearTimer?: (handle: any) => void}} [timers]
 *   the interval functions (default: the global setInterval / clearInterval).
 * @returns {{
 *   add: (name: string, tick: () => void, periodMs: number) => void,
 *   need: (name: string, on: boolean) => void,
 *   running: () => string[],
 *   stopAll: () => void,
 * }}
 *   `add` declares a clock: `tick` runs every `periodMs` ms while the clock is needed (a name
 *   `need`ed before it was added starts when it is added). `need(name, on)` starts or stops it;
 *   asking for what is already so does nothing (the phase of a running clock is kept). `running`
 *   names the clocks whose timer is set. `stopAll` stops every clock and forgets what was needed
 *   (sign-out); the parts ask again as they redraw.
 */
export function createTicker({ setTimer = (fn, ms) => setInterval(fn, ms), clearTimer = (h) => clearInterval(h) } = {}) {
  /** @type {Map<string, {tick: () => void, periodMs: number}>} */
  const clocks = new Map();
  /** Names of the clocks whose part has something to update. */
  const needed = new Set();
  /** @type {Map<string, any>} timer handles of the running clocks */
  const handles = new Map();

  function sync(name) {
    const clock = clocks.get(name);
    const want = Boolean(clock) && needed.has(name);
    const handle = handles.get(name);
    if (want && handle === undefined) handles.set(name, setTimer(() => clock.tick(), clock.periodMs));
    else if (!want && handle !== undefined) {
      clearTimer(handle);
      handles.delete(name);
    }
  }

  return {
    add(name, tick, periodMs) {
      if (handles.has(name)) {
        clearTimer(handles.get(name));
        handles.delete(name);
      }
      clocks.set(name, { tick, periodMs });
      sync(name);
    },
    need(name, on) {
      if (on) needed.add(name);
      else needed.delete(name);
      sync(name);
    },
    running: () => [...handles.keys()],
    stopAll() {
      needed.clear();
      for (const name of [...handles.keys()]) sync(name);
    },
  };
}
