// When a function runs: at most once (a lazy module load), at most once per animation frame
// (a redraw asked for by many changes), or after the next frame (work that should not delay
// it). No DOM; unit-tested in ui/test/timing.test.mjs.

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
