// When a function runs: at most once (a lazy module load), or at most once per animation frame
// (a redraw asked for by many changes). No DOM; unit-tested in ui/test/timing.test.mjs.

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
 *  before then. `raf` is the frame scheduler (requestAnimationFrame; tests pass their own). */
export function oncePerFrame(fn, raf = (cb) => requestAnimationFrame(cb)) {
  let queued = false;
  return () => {
    if (queued) return;
    queued = true;
    raf(() => {
      queued = false;
      fn();
    });
  };
}
